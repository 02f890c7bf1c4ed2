package voice

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Transport encryption of voice packets in the aead_aes256_gcm_rtpsize
// mode (Discord's voice connections documentation, "Transport Encryption
// Modes"): each RTP packet is the RTP header (RFC 3550 §5.1, with the
// extension's 4-byte preamble when its X bit is set) in the clear as
// additional data, then the AES-256-GCM ciphertext of the rest (extension
// body and payload) with its 16-byte tag, then a 32-bit big-endian nonce
// counter; the 12-byte GCM nonce is that counter followed by 8 zero bytes.

const (
	rtpHeaderSize = 12
	nonceSize     = 4
	gcmTagSize    = 16
)

// EncryptionMode is the only transport encryption mode this package
// speaks; Discord offers it to every client.
const EncryptionMode = "aead_aes256_gcm_rtpsize"

// Transport seals and opens RTP packets with the session's secret key
// (from opcode 4, session description). Not safe for concurrent Seal
// calls.
type Transport struct {
	aead  cipher.AEAD
	nonce uint32
}

// NewTransport takes the 32-byte secret key.
func NewTransport(secretKey []byte) (*Transport, error) {
	if len(secretKey) != 32 {
		return nil, fmt.Errorf("voice: secret_key of %d bytes, want 32", len(secretKey))
	}
	block, err := aes.NewCipher(secretKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Transport{aead: aead}, nil
}

func gcmNonce(n uint32) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint32(b, n)
	return b
}

// headerLen is the length of the clear part of an RTP packet: the fixed
// header, the CSRCs, and the extension preamble if any.
func headerLen(pkt []byte) (int, error) {
	if len(pkt) < rtpHeaderSize || pkt[0]>>6 != 2 {
		return 0, errors.New("voice: not an RTP version 2 packet")
	}
	n := rtpHeaderSize + 4*int(pkt[0]&0x0f)
	if pkt[0]&0x10 != 0 {
		n += 4
	}
	if len(pkt) < n {
		return 0, errors.New("voice: RTP header longer than the packet")
	}
	return n, nil
}

// Seal encrypts payload (an RTP payload: a DAVE-encrypted Opus frame)
// behind header, which must be a complete RTP header without extension.
func (t *Transport) Seal(header, payload []byte) ([]byte, error) {
	n, err := headerLen(header)
	if err != nil {
		return nil, err
	}
	if n != len(header) || header[0]&0x10 != 0 {
		return nil, errors.New("voice: Seal takes a bare RTP header")
	}
	t.nonce++
	out := append([]byte{}, header...)
	out = t.aead.Seal(out, gcmNonce(t.nonce), payload, header)
	return binary.BigEndian.AppendUint32(out, t.nonce), nil
}

// Packet is a received RTP packet, decrypted.
type Packet struct {
	Sequence  uint16
	Timestamp uint32
	SSRC      uint32
	Payload   []byte // with any header extension removed
}

// Open decrypts a received packet and strips its header extension.
func (t *Transport) Open(pkt []byte) (*Packet, error) {
	n, err := headerLen(pkt)
	if err != nil {
		return nil, err
	}
	if len(pkt) < n+gcmTagSize+nonceSize {
		return nil, errors.New("voice: packet too short")
	}
	nonce := binary.BigEndian.Uint32(pkt[len(pkt)-nonceSize:])
	plain, err := t.aead.Open(nil, gcmNonce(nonce), pkt[n:len(pkt)-nonceSize], pkt[:n])
	if err != nil {
		return nil, errors.New("voice: packet authentication failed")
	}
	if pkt[0]&0x10 != 0 {
		// RFC 3550 §5.3.1: the preamble's length counts 32-bit words.
		words := int(binary.BigEndian.Uint16(pkt[n-2 : n]))
		if len(plain) < 4*words {
			return nil, errors.New("voice: header extension longer than the packet")
		}
		plain = plain[4*words:]
	}
	return &Packet{
		Sequence:  binary.BigEndian.Uint16(pkt[2:4]),
		Timestamp: binary.BigEndian.Uint32(pkt[4:8]),
		SSRC:      binary.BigEndian.Uint32(pkt[8:12]),
		Payload:   plain,
	}, nil
}

// RTPHeader builds the header of an outgoing Opus packet (payload type
// 0x78, as Discord uses).
func RTPHeader(seq uint16, timestamp, ssrc uint32) []byte {
	h := make([]byte, rtpHeaderSize)
	h[0], h[1] = 0x80, 0x78
	binary.BigEndian.PutUint16(h[2:], seq)
	binary.BigEndian.PutUint32(h[4:], timestamp)
	binary.BigEndian.PutUint32(h[8:], ssrc)
	return h
}

// IP discovery (Discord's voice connections documentation, "IP
// Discovery"): a 74-byte UDP packet, type 1 (request) or 2 (response),
// length 70, the SSRC, then a 64-byte NUL-padded address and a 2-byte
// port.

const discoverySize = 74

// DiscoveryRequest is the request for ssrc.
func DiscoveryRequest(ssrc uint32) []byte {
	b := make([]byte, discoverySize)
	binary.BigEndian.PutUint16(b[0:], 1)
	binary.BigEndian.PutUint16(b[2:], 70)
	binary.BigEndian.PutUint32(b[4:], ssrc)
	return b
}

// DiscoveryResponse builds the answer a voice server gives (for fakes).
func DiscoveryResponse(ssrc uint32, addr netip.AddrPort) []byte {
	b := make([]byte, discoverySize)
	binary.BigEndian.PutUint16(b[0:], 2)
	binary.BigEndian.PutUint16(b[2:], 70)
	binary.BigEndian.PutUint32(b[4:], ssrc)
	copy(b[8:72], addr.Addr().String())
	binary.BigEndian.PutUint16(b[72:], addr.Port())
	return b
}

// ParseDiscoveryResponse reads the external address the voice server saw.
func ParseDiscoveryResponse(b []byte, ssrc uint32) (netip.AddrPort, error) {
	if len(b) != discoverySize || binary.BigEndian.Uint16(b) != 2 || binary.BigEndian.Uint16(b[2:]) != 70 {
		return netip.AddrPort{}, errors.New("voice: not an IP discovery response")
	}
	if got := binary.BigEndian.Uint32(b[4:]); got != ssrc {
		return netip.AddrPort{}, fmt.Errorf("voice: IP discovery response for SSRC %d, not %d", got, ssrc)
	}
	end := 8
	for end < 72 && b[end] != 0 {
		end++
	}
	addr, err := netip.ParseAddr(string(b[8:end]))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("voice: IP discovery address: %w", err)
	}
	return netip.AddrPortFrom(addr, binary.BigEndian.Uint16(b[72:])), nil
}
