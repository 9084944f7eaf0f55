//! Test harness shared by the integration and end-to-end tests (filled in by the harness work).
