"""The portal's AWS glue (issue 14): Cognito's pre-token-generation trigger, which gives
hosted-UI tokens the claims of CONTRACTS.md, and the custom resource that writes the
portal's ``config.json`` to its bucket at deploy. No routes: those belong to the services
whose data they serve."""
