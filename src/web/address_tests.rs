#![allow(clippy::unwrap_used)]

use super::*;

fn range_of(text: &str) -> Option<Range> {
    let ip: IpAddr = text.parse().unwrap_or_else(|_| panic!("{text} parses"));
    refusal(ip).map(|r| r.range)
}

#[test]
fn every_ipv4_range_a_machine_keeps_for_itself_is_refused() {
    let rows = [
        ("0.0.0.0", Range::Unspecified),
        ("0.1.2.3", Range::Unspecified),
        ("10.0.0.1", Range::Private),
        ("10.255.255.255", Range::Private),
        ("100.64.0.1", Range::Cgnat),
        ("100.127.255.254", Range::Cgnat),
        ("127.0.0.1", Range::Loopback),
        ("127.0.0.2", Range::Loopback),
        ("127.255.255.254", Range::Loopback),
        ("169.254.0.1", Range::LinkLocal),
        ("169.254.169.254", Range::CloudMetadata),
        ("168.63.129.16", Range::CloudMetadata),
        ("100.100.100.200", Range::CloudMetadata),
        ("172.16.0.1", Range::Private),
        ("172.31.255.255", Range::Private),
        ("192.0.0.192", Range::Reserved),
        ("192.0.2.10", Range::Documentation),
        ("192.88.99.1", Range::Reserved),
        ("192.168.1.1", Range::Private),
        ("198.18.0.1", Range::Benchmarking),
        ("198.19.255.255", Range::Benchmarking),
        ("198.51.100.7", Range::Documentation),
        ("203.0.113.9", Range::Documentation),
        ("224.0.0.1", Range::Multicast),
        ("239.255.255.250", Range::Multicast),
        ("240.0.0.1", Range::Reserved),
        ("255.255.255.255", Range::Broadcast),
    ];
    for (ip, range) in rows {
        assert_eq!(range_of(ip), Some(range), "{ip}");
    }
}

#[test]
fn range_edges_do_not_spill_onto_public_neighbours() {
    for ip in [
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "126.255.255.255",
        "128.0.0.0",
        "169.253.255.255",
        "169.255.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.167.255.255",
        "192.169.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "1.1.1.1",
        "8.8.8.8",
        "93.184.216.34",
    ] {
        assert_eq!(range_of(ip), None, "{ip} is public");
    }
}

#[test]
fn every_ipv6_range_a_machine_keeps_for_itself_is_refused() {
    let rows = [
        ("::", Range::Unspecified),
        ("::1", Range::Loopback),
        ("fd00:ec2::254", Range::CloudMetadata),
        ("fc00::1", Range::UniqueLocal),
        ("fd12:3456::1", Range::UniqueLocal),
        ("fe80::1", Range::LinkLocal),
        ("febf::1", Range::LinkLocal),
        ("fec0::1", Range::Private),
        ("ff02::1", Range::Multicast),
        ("64:ff9b:1::1", Range::Private),
        ("100::1", Range::Reserved),
        ("2001:db8::1", Range::Documentation),
        ("3fff::1", Range::Documentation),
        ("2001:2::1", Range::Benchmarking),
        ("2001::1", Range::Reserved),
        ("4000::1", Range::NotGlobal),
        ("::ffff:0:7f00:1", Range::NotGlobal),
    ];
    for (ip, range) in rows {
        assert_eq!(range_of(ip), Some(range), "{ip}");
    }
}

#[test]
fn ipv4_hidden_inside_ipv6_is_judged_as_ipv4() {
    let rows = [
        ("::ffff:127.0.0.1", Range::Loopback, "IPv4-mapped"),
        ("::ffff:7f00:1", Range::Loopback, "IPv4-mapped"),
        (
            "::ffff:169.254.169.254",
            Range::CloudMetadata,
            "IPv4-mapped",
        ),
        ("::ffff:10.0.0.1", Range::Private, "IPv4-mapped"),
        ("::127.0.0.1", Range::Loopback, "IPv4-compatible"),
        ("::10.1.2.3", Range::Private, "IPv4-compatible"),
        ("::2", Range::Unspecified, "IPv4-compatible"),
        ("64:ff9b::127.0.0.1", Range::Loopback, "NAT64"),
        ("64:ff9b::a9fe:a9fe", Range::CloudMetadata, "NAT64"),
        ("2002:7f00:1::", Range::Loopback, "6to4"),
        ("2002:c0a8:101::1", Range::Private, "6to4"),
    ];
    for (ip, range, form) in rows {
        let parsed: IpAddr = ip.parse().unwrap();
        assert_eq!(
            refusal(parsed),
            Some(Refused {
                range,
                wrapped_in: Some(form)
            }),
            "{ip}"
        );
    }
}

#[test]
fn public_addresses_pass_also_through_nat64_and_6to4() {
    for ip in [
        "2606:4700::1111",
        "2a00:1450:4001::200e",
        "64:ff9b::808:808",
        "2002:808:808::1",
        "::ffff:8.8.8.8",
    ] {
        assert_eq!(range_of(ip), None, "{ip} is public");
    }
}

#[test]
fn the_refusal_names_the_range_and_the_wrapping() {
    let refused = refusal("::ffff:169.254.169.254".parse().unwrap()).unwrap();
    assert_eq!(
        refused.to_string(),
        "a cloud metadata address (inside an IPv4-mapped IPv6 address)"
    );
}
