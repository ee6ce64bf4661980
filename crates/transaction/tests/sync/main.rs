//! Many machines sharing one memory through a git remote: real `git`, a
//! bare repository on disk (and one served by `git daemon`), two or three
//! workspaces that write, sync in every order, conflict, crash and are
//! refused, and must end with the same files, nothing lost.

mod common;

mod blocks;
mod conflicts;
mod crash;
mod interleave;
mod records;
mod refusal;
mod remote;
mod unrelated;
