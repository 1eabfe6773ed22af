//! How many colours the terminal shows, and colours brought down to that: the syntax theme
//! is 24-bit, and a 256-colour terminal (tmux without `Tc`, older terminals) or a 16-colour
//! one (the Linux console) would draw its escapes wrongly or not at all. The depth is read
//! from the environment once, when the TUI starts; until then (tests) it is 24-bit.

use std::sync::OnceLock;

use ratatui::style::Color;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColourDepth {
    TrueColour,
    Ansi256,
    Ansi16,
}

static DEPTH: OnceLock<ColourDepth> = OnceLock::new();

impl ColourDepth {
    /// The depth `COLORTERM` and `TERM` announce: `truecolor`/`24bit` or a `-direct` terminal
    /// is 24-bit, a `256color` terminal 256, anything else (or nothing) 16.
    pub fn from_env(colorterm: Option<&str>, term: Option<&str>) -> Self {
        let colorterm = colorterm.unwrap_or("").to_ascii_lowercase();
        let term = term.unwrap_or("").to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" || term.ends_with("-direct") {
            ColourDepth::TrueColour
        } else if term.contains("256color") {
            ColourDepth::Ansi256
        } else {
            ColourDepth::Ansi16
        }
    }
}

/// Reads the depth from this process's environment; called once as the TUI starts.
pub fn detect() {
    let depth = ColourDepth::from_env(
        std::env::var("COLORTERM").ok().as_deref(),
        std::env::var("TERM").ok().as_deref(),
    );
    // A second call (a second TUI in one process) keeps the first answer.
    let _ = DEPTH.set(depth);
}

/// The depth colours are drawn for.
pub fn depth() -> ColourDepth {
    DEPTH.get().copied().unwrap_or(ColourDepth::TrueColour)
}

/// A 24-bit colour as the terminal at `depth` can show it.
pub fn rgb(depth: ColourDepth, r: u8, g: u8, b: u8) -> Color {
    match depth {
        ColourDepth::TrueColour => Color::Rgb(r, g, b),
        ColourDepth::Ansi256 => Color::Indexed(nearest_256(r, g, b)),
        ColourDepth::Ansi16 => nearest_16(r, g, b),
    }
}

/// The levels of xterm's 6×6×6 colour cube (indexes 16–231).
const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2) as u32;
    d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)
}

/// The nearest of the cube and the 24 greys (232–255); the first 16 are left out because
/// every terminal theme redefines them.
fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    let level = |v: u8| {
        (0..CUBE.len())
            .min_by_key(|&i| (i32::from(CUBE[i]) - i32::from(v)).abs())
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (CUBE[ri], CUBE[gi], CUBE[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let average = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let grey_step = (average.saturating_sub(3) / 10).min(23) as u8;
    let grey = 8 + 10 * grey_step;
    if distance((grey, grey, grey), (r, g, b)) < distance(cube, (r, g, b)) {
        232 + grey_step
    } else {
        cube_index as u8
    }
}

/// The nearest of the 16 named colours (xterm's defaults stand for whatever the theme uses).
fn nearest_16(r: u8, g: u8, b: u8) -> Color {
    const NAMED: [(Color, (u8, u8, u8)); 16] = [
        (Color::Black, (0, 0, 0)),
        (Color::Red, (205, 0, 0)),
        (Color::Green, (0, 205, 0)),
        (Color::Yellow, (205, 205, 0)),
        (Color::Blue, (0, 0, 238)),
        (Color::Magenta, (205, 0, 205)),
        (Color::Cyan, (0, 205, 205)),
        (Color::Gray, (229, 229, 229)),
        (Color::DarkGray, (127, 127, 127)),
        (Color::LightRed, (255, 0, 0)),
        (Color::LightGreen, (0, 255, 0)),
        (Color::LightYellow, (255, 255, 0)),
        (Color::LightBlue, (92, 92, 255)),
        (Color::LightMagenta, (255, 0, 255)),
        (Color::LightCyan, (0, 255, 255)),
        (Color::White, (255, 255, 255)),
    ];
    NAMED
        .iter()
        .min_by_key(|(_, rgb)| distance(*rgb, (r, g, b)))
        .map_or(Color::Reset, |(colour, _)| *colour)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_decides_the_depth() {
        use ColourDepth::*;
        for (colorterm, term, want) in [
            (Some("truecolor"), Some("xterm-256color"), TrueColour),
            (Some("24bit"), None, TrueColour),
            (None, Some("xterm-direct"), TrueColour),
            (None, Some("xterm-256color"), Ansi256),
            (None, Some("tmux-256color"), Ansi256),
            (None, Some("screen"), Ansi16),
            (None, Some("linux"), Ansi16),
            (None, None, Ansi16),
        ] {
            assert_eq!(ColourDepth::from_env(colorterm, term), want, "{term:?}");
        }
    }

    #[test]
    fn colours_come_down_to_the_nearest_the_terminal_has() {
        assert_eq!(
            rgb(ColourDepth::TrueColour, 1, 2, 3),
            Color::Rgb(1, 2, 3),
            "24-bit stays as is"
        );
        // Pure cube colours and greys map exactly.
        assert_eq!(rgb(ColourDepth::Ansi256, 0, 95, 0), Color::Indexed(22));
        assert_eq!(rgb(ColourDepth::Ansi256, 95, 0, 0), Color::Indexed(52));
        assert_eq!(
            rgb(ColourDepth::Ansi256, 255, 255, 255),
            Color::Indexed(231)
        );
        assert_eq!(
            rgb(ColourDepth::Ansi256, 128, 128, 128),
            Color::Indexed(244)
        );
        assert_eq!(rgb(ColourDepth::Ansi16, 200, 10, 10), Color::Red);
        assert_eq!(rgb(ColourDepth::Ansi16, 20, 20, 20), Color::Black);
        assert_eq!(rgb(ColourDepth::Ansi16, 150, 200, 250), Color::Gray);
    }
}
