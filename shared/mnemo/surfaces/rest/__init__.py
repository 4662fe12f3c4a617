"""REST under /v1: one router per area and the OpenAPI document."""
