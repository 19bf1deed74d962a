//! (placeholder: filled by the wire work)
