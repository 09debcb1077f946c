//! Bristol Fashion: reading and writing circuits.
