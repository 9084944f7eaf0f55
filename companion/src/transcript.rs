//! Transcript and rollout readers (pure over bytes).
