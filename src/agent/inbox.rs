//! What the user sends while a request runs: messages to steer it (`Steer`) and their own
//! commands (`Shell`). The router holds them here instead of queueing them behind the request;
//! the request takes them at its next step boundary. Counting the requests handed to the agent
//! (not only the one running) closes the gap between the router forwarding a request and the
//! agent starting it: nothing sent meanwhile waits for a request that is already over.

use std::collections::VecDeque;

use crate::bus::{Attachment, UserCommand};

/// A message or command waiting for the next step boundary.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Inbound {
    Message {
        id: String,
        text: String,
        attach: Vec<Attachment>,
    },
    Shell {
        id: String,
        command: String,
        context: bool,
    },
}

impl Inbound {
    pub(super) fn id(&self) -> &str {
        match self {
            Inbound::Message { id, .. } | Inbound::Shell { id, .. } => id,
        }
    }

    /// What the user typed, as the log keeps it.
    pub(super) fn typed(&self) -> String {
        match self {
            Inbound::Message { text, .. } => text.clone(),
            Inbound::Shell {
                command, context, ..
            } => {
                format!("{}{command}", if *context { "!" } else { "!!" })
            }
        }
    }

    fn from_command(command: &UserCommand) -> Option<Self> {
        match command {
            UserCommand::Steer { id, text, attach } => Some(Inbound::Message {
                id: id.clone(),
                text: text.clone(),
                attach: attach.clone(),
            }),
            UserCommand::Shell {
                id,
                command,
                context,
            } => Some(Inbound::Shell {
                id: id.clone(),
                command: command.clone(),
                context: *context,
            }),
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct Inbox {
    /// Requests handed to the agent and not over yet.
    requests: usize,
    waiting: VecDeque<Inbound>,
    /// Taken back, still to be logged: (id, what it said).
    withdrawn: Vec<(String, String)>,
}

impl Inbox {
    /// The router hands a request to the agent.
    pub(super) fn request_forwarded(&mut self) {
        self.requests += 1;
    }

    /// The router got `command`: true when it waits here for a step boundary (a request is
    /// running or about to); false when it goes to the agent's queue like any command.
    pub(super) fn hold(&mut self, command: &UserCommand) -> bool {
        if self.requests == 0 {
            return false;
        }
        match Inbound::from_command(command) {
            Some(item) => {
                self.waiting.push_back(item);
                true
            }
            None => false,
        }
    }

    /// Takes a waiting item back; false when it is not waiting (delivered, or never here).
    pub(super) fn withdraw(&mut self, id: &str) -> bool {
        let Some(at) = self.waiting.iter().position(|item| item.id() == id) else {
            return false;
        };
        if let Some(item) = self.waiting.remove(at) {
            self.withdrawn.push((item.id().to_string(), item.typed()));
        }
        true
    }

    /// A withdrawal of something the front end held: only the log is told.
    pub(super) fn note_withdrawn(&mut self, id: String, text: String) {
        self.withdrawn.push((id, text));
    }

    pub(super) fn take_withdrawn(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.withdrawn)
    }

    /// Puts items taken earlier back in front of what came since, in their order.
    pub(super) fn put_back(&mut self, items: impl DoubleEndedIterator<Item = Inbound>) {
        for item in items.rev() {
            self.waiting.push_front(item);
        }
    }

    /// Everything waiting, in the order it came.
    pub(super) fn take(&mut self) -> Vec<Inbound> {
        self.waiting.drain(..).collect()
    }

    /// A request is over. When it was the last one handed over, what still waits comes back
    /// (the caller decides), and from now on everything goes to the agent's queue.
    pub(super) fn request_over(&mut self) -> Vec<Inbound> {
        self.requests = self.requests.saturating_sub(1);
        if self.requests == 0 {
            self.take()
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steer(id: &str, text: &str) -> UserCommand {
        UserCommand::Steer {
            id: id.into(),
            text: text.into(),
            attach: Vec::new(),
        }
    }

    #[test]
    fn nothing_is_held_without_a_request_and_everything_is_while_one_runs() {
        let mut inbox = Inbox::default();
        assert!(!inbox.hold(&steer("m1", "a")));
        inbox.request_forwarded();
        assert!(inbox.hold(&steer("m2", "b")));
        let shell = UserCommand::Shell {
            id: "s1".into(),
            command: "ls".into(),
            context: false,
        };
        assert!(inbox.hold(&shell));
        assert!(!inbox.hold(&UserCommand::ShowCost));
        let ids: Vec<String> = inbox.take().iter().map(|i| i.id().to_string()).collect();
        assert_eq!(ids, ["m2", "s1"]);
        assert!(inbox.take().is_empty());
    }

    #[test]
    fn a_withdrawn_message_is_never_delivered_and_is_logged_with_its_text() {
        let mut inbox = Inbox::default();
        inbox.request_forwarded();
        inbox.hold(&steer("m1", "first"));
        inbox.hold(&steer("m2", "second"));
        assert!(inbox.withdraw("m1"));
        assert!(!inbox.withdraw("m1"), "a second withdrawal finds nothing");
        assert!(!inbox.withdraw("m9"));
        assert_eq!(
            inbox.take_withdrawn(),
            [("m1".to_string(), "first".to_string())]
        );
        let left: Vec<String> = inbox.take().iter().map(Inbound::typed).collect();
        assert_eq!(left, ["second"]);
        // Delivered already: nothing to take back, nothing logged as withdrawn.
        assert!(!inbox.withdraw("m2"));
        assert!(inbox.take_withdrawn().is_empty());
    }

    #[test]
    fn what_waits_when_the_last_request_ends_comes_back_in_order() {
        let mut inbox = Inbox::default();
        inbox.request_forwarded();
        inbox.request_forwarded();
        inbox.hold(&steer("m1", "a"));
        assert!(
            inbox.request_over().is_empty(),
            "another request is still to run"
        );
        assert!(inbox.hold(&steer("m2", "b")));
        let back: Vec<String> = inbox
            .request_over()
            .iter()
            .map(|i| i.id().to_string())
            .collect();
        assert_eq!(back, ["m1", "m2"]);
        assert!(
            !inbox.hold(&steer("m3", "c")),
            "no request: the queue takes it"
        );
    }
}
