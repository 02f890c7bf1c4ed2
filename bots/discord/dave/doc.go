// Package dave implements DAVE, Discord's end-to-end encryption of voice
// (and video) calls, for a bot taking part in a voice channel. Since
// 1 March 2026 Discord admits only DAVE-capable clients to voice.
//
// DAVE (protocol version 1; the whitepaper at daveprotocol.com, and
// discord/libdave, the reference in C++) has two halves, both here:
//
//   - Group key agreement by MLS (RFC 9420) in cipher suite 2,
//     MLS_128_DHKEMP256_AES128GCM_SHA256_P256. The voice gateway is the
//     group's external sender: it proposes adding and removing members;
//     members commit the proposals; the gateway announces one commit and
//     sends its Welcome to the new members. Members are identified by
//     basic credentials holding their Discord user ID (big-endian uint64).
//     This package holds only the part of MLS that needs: key packages,
//     joining by Welcome (with the ratchet tree inline), commits of add and
//     remove proposals by reference (with update paths for removals), the
//     pending one-member group of a member alone in the call, and the
//     exporter. No PrivateMessages, PSKs, updates, external joins or
//     resumption.
//   - Media frame encryption: each sender's key ratchet starts from the
//     MLS exporter (label "Discord Secure Frames v0", context the sender's
//     user ID as a little-endian uint64, 16 bytes) and yields a key per
//     generation by RFC 9420 §9.1's hash ratchet; frames are sealed with
//     AES-128-GCM under a truncated 8-byte tag, a 32-bit nonce counter sent
//     as ULEB128, and 0xFAFA marking the end (frame.go).
//
// Session is the interface: it takes the bodies of the voice gateway's
// DAVE opcodes (25 external sender, 27 proposals, 29 commit, 30 Welcome)
// and makes those this member sends (26 key package, 28 commit and
// Welcome), and hands out an Encryptor for this member's frames and a
// Decryptor for each other member's.
//
// The encodings use the TLS presentation language with MLS's
// variable-length vector sizes (RFC 9420 §2.1.2) over
// golang.org/x/crypto/cryptobyte; HPKE is github.com/cloudflare/circl's;
// the rest is the standard library. The tests run the RFC 9420 test
// vectors of cipher suite 2 (testdata/rfc9420) and a handshake and frame
// exchange in both directions with @snazzah/davey, the Rust and OpenMLS
// implementation discord.js uses (internal/davetest).
package dave
