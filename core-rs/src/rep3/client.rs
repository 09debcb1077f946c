//! External input providers (clients): in progress.
