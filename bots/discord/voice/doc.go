// Package voice is a Discord voice connection (voice gateway version 8)
// without audio: Dial runs the voice gateway's handshake (hello,
// identify with DAVE, ready, UDP IP discovery, select protocol, session
// description, heartbeats), DAVE over its opcodes 11, 13 and 21-31 (with
// package dave), and the UDP side with aead_aes256_gcm_rtpsize transport
// encryption; it takes and gives Opus frames with their speaker. Opus
// decoding and encoding, resuming a dropped connection, and joining a
// channel through the main gateway are not built yet.
package voice
