from mnemo.local.server import main

raise SystemExit(main())
