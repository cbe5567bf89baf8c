pub mod names;
