//! Integration tests of the topic layer: generated invalid files produce
//! the right codes, the core budget property, and the fuzz corpus replay.

mod budget;
mod codes;
mod corpus;
