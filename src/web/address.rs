//! Which IP addresses the egress client may connect to. Only public unicast addresses pass:
//! everything a machine, its LAN or its cloud provider keeps for itself is refused by range,
//! also when it hides inside an IPv6 form that carries an IPv4 address (mapped, compatible,
//! NAT64, 6to4). Fed by the egress checker with every resolved or literal address.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not one the web tools may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    Unspecified,
    Loopback,
    Private,
    LinkLocal,
    Cgnat,
    UniqueLocal,
    Multicast,
    Broadcast,
    CloudMetadata,
    Documentation,
    Benchmarking,
    /// Reserved, deprecated or special-purpose ranges (240/4, 192.0.0/24, Teredo, ORCHID, …).
    Reserved,
    /// IPv6 outside global unicast (`2000::/3`) that no rule above names.
    NotGlobal,
}

impl Range {
    pub fn as_str(self) -> &'static str {
        match self {
            Range::Unspecified => "an unspecified address",
            Range::Loopback => "a loopback address",
            Range::Private => "a private address",
            Range::LinkLocal => "a link-local address",
            Range::Cgnat => "a carrier-grade NAT address",
            Range::UniqueLocal => "a unique-local address",
            Range::Multicast => "a multicast address",
            Range::Broadcast => "the broadcast address",
            Range::CloudMetadata => "a cloud metadata address",
            Range::Documentation => "a documentation address",
            Range::Benchmarking => "a benchmarking address",
            Range::Reserved => "a reserved address",
            Range::NotGlobal => "not a global unicast address",
        }
    }
}

/// A refused address: its range, and the IPv6 form it was wrapped in, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub range: Range,
    /// `IPv4-mapped`, `NAT64`, … when the IPv4 address inside an IPv6 one was refused.
    pub wrapped_in: Option<&'static str>,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.wrapped_in {
            Some(form) => write!(f, "{} (inside an {form} IPv6 address)", self.range.as_str()),
            None => f.write_str(self.range.as_str()),
        }
    }
}

/// `None` when `ip` is a public unicast address; otherwise why not.
pub fn refusal(ip: IpAddr) -> Option<Refused> {
    match ip {
        IpAddr::V4(v4) => v4_range(v4).map(|range| Refused {
            range,
            wrapped_in: None,
        }),
        IpAddr::V6(v6) => v6_refusal(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], bits: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

/// Ranges of IANA's IPv4 special-purpose registry that are not reachable on the public internet.
const V4_RANGES: &[([u8; 4], u32, Range)] = &[
    ([169, 254, 169, 254], 32, Range::CloudMetadata), // AWS, GCP, Azure, OpenStack, …
    ([168, 63, 129, 16], 32, Range::CloudMetadata),   // Azure's wire server (a public address)
    ([100, 100, 100, 200], 32, Range::CloudMetadata), // Alibaba Cloud
    ([0, 0, 0, 0], 8, Range::Unspecified),            // "this network"; 0.0.0.0 reaches the host
    ([10, 0, 0, 0], 8, Range::Private),
    ([100, 64, 0, 0], 10, Range::Cgnat),
    ([127, 0, 0, 0], 8, Range::Loopback),
    ([169, 254, 0, 0], 16, Range::LinkLocal),
    ([172, 16, 0, 0], 12, Range::Private),
    ([192, 0, 0, 0], 24, Range::Reserved), // IETF protocol assignments (incl. 192.0.0.192)
    ([192, 0, 2, 0], 24, Range::Documentation),
    ([192, 88, 99, 0], 24, Range::Reserved), // the old 6to4 relay anycast
    ([192, 168, 0, 0], 16, Range::Private),
    ([198, 18, 0, 0], 15, Range::Benchmarking),
    ([198, 51, 100, 0], 24, Range::Documentation),
    ([203, 0, 113, 0], 24, Range::Documentation),
    ([224, 0, 0, 0], 4, Range::Multicast),
    ([255, 255, 255, 255], 32, Range::Broadcast),
    ([240, 0, 0, 0], 4, Range::Reserved),
];

fn v4_range(ip: Ipv4Addr) -> Option<Range> {
    V4_RANGES
        .iter()
        .find(|(net, bits, _)| in_v4(ip, *net, *bits))
        .map(|(_, _, range)| *range)
}

fn in_v6(ip: Ipv6Addr, net: u128, bits: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
    u128::from(ip) & mask == net & mask
}

const fn v6(segments: [u16; 8]) -> u128 {
    let mut value = 0u128;
    let mut i = 0;
    while i < 8 {
        value = (value << 16) | segments[i] as u128;
        i += 1;
    }
    value
}

/// IPv6 ranges refused outright (checked before the global-unicast rule, so a metadata
/// address is named as such).
const V6_RANGES: &[(u128, u32, Range)] = &[
    (
        v6([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254]),
        128,
        Range::CloudMetadata,
    ), // AWS
    (v6([0, 0, 0, 0, 0, 0, 0, 0]), 128, Range::Unspecified),
    (v6([0, 0, 0, 0, 0, 0, 0, 1]), 128, Range::Loopback),
    (v6([0xfc00, 0, 0, 0, 0, 0, 0, 0]), 7, Range::UniqueLocal),
    (v6([0xfe80, 0, 0, 0, 0, 0, 0, 0]), 10, Range::LinkLocal),
    (v6([0xfec0, 0, 0, 0, 0, 0, 0, 0]), 10, Range::Private), // deprecated site-local
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0]), 8, Range::Multicast),
    (v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0]), 48, Range::Private), // local-use NAT64
    (v6([0x100, 0, 0, 0, 0, 0, 0, 0]), 64, Range::Reserved),    // discard-only
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]),
        32,
        Range::Documentation,
    ),
    (v6([0x3fff, 0, 0, 0, 0, 0, 0, 0]), 20, Range::Documentation),
    (v6([0x2001, 2, 0, 0, 0, 0, 0, 0]), 48, Range::Benchmarking),
    // IETF special-purpose block: Teredo (whose client address is hidden), ORCHID, …
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0]), 23, Range::Reserved),
];

/// The IPv4 address an IPv6 address carries, and the form's name.
fn embedded_v4(ip: Ipv6Addr) -> Option<(Ipv4Addr, &'static str)> {
    let bits = u128::from(ip);
    let low = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if in_v6(ip, v6([0, 0, 0, 0, 0, 0xffff, 0, 0]), 96) {
        return Some((low, "IPv4-mapped"));
    }
    // `::a.b.c.d` (IPv4-compatible, deprecated): `::` and `::1` are handled as themselves.
    if in_v6(ip, 0, 96) && bits > 1 {
        return Some((low, "IPv4-compatible"));
    }
    if in_v6(ip, v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0]), 96) {
        return Some((low, "NAT64"));
    }
    if in_v6(ip, v6([0x2002, 0, 0, 0, 0, 0, 0, 0]), 16) {
        return Some((Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32), "6to4"));
    }
    None
}

fn v6_refusal(ip: Ipv6Addr) -> Option<Refused> {
    let direct = |range| {
        Some(Refused {
            range,
            wrapped_in: None,
        })
    };
    if let Some((v4, form)) = embedded_v4(ip) {
        // Public IPv4 behind DNS64/NAT64 or 6to4 is a normal way to reach a site.
        return v4_range(v4).map(|range| Refused {
            range,
            wrapped_in: Some(form),
        });
    }
    if let Some((_, _, range)) = V6_RANGES
        .iter()
        .find(|(net, bits, _)| in_v6(ip, *net, *bits))
    {
        return direct(*range);
    }
    if !in_v6(ip, v6([0x2000, 0, 0, 0, 0, 0, 0, 0]), 3) {
        return direct(Range::NotGlobal);
    }
    None
}

#[cfg(test)]
#[path = "address_tests.rs"]
mod tests;
