"""The identity service: accounts, sign-in, and the platform's only issuer of access tokens."""
