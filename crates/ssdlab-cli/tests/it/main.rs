//! The CLI's integration tests, one binary (one link instead of five): each module drives the
//! built `ssdlab` binary end to end.

mod cli;
mod experiment;
mod extend;
mod fit_checks;
mod flows;
mod hostile;
mod outputs;
mod reliability;
mod reliability3;
