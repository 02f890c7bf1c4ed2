// Package voice holds the parts of a Discord voice connection (voice
// gateway version 8) that do not need audio: the DAVE side of the voice
// gateway (its opcodes 11, 13 and 21-31, over package dave), the
// aead_aes256_gcm_rtpsize transport encryption of RTP packets, and UDP IP
// discovery. The WebSocket and UDP client around them, Opus, and joining
// channels are not built yet.
package voice
