//! The prompts and pickers: the modal layers over the panes (approval, trust, help, the
//! session, mode, model and rewind pickers, the revert confirmation, the `/jobs` view), the
//! stack they sit on (`layers.rs`) and the frame they share (`modal.rs`), and the popups over
//! the input (the `/` palette, the `@` finder).

pub mod approval;
pub mod choice;
pub mod help;
pub mod jobs_view;
pub mod layers;
pub mod mention_finder;
pub mod modal;
pub mod palette;
pub mod picker;
pub mod revert;
pub mod rewind;
pub mod trust;
