"""Services: the use cases. They receive ports, check the caller's scope, return domain models."""
