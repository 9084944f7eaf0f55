//! Screen classifiers (pure).
