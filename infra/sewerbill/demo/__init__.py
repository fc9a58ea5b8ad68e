"""The demo utility: a seeded, reproducible year of the four tenants' import files (issue 32)."""
