package dave

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
)

// The DAVE media frame (whitepaper "Frame format"; libdave's encryptor and
// InboundFrameProcessor): the frame with its encrypted parts replaced by
// AES-128-GCM ciphertext, then the supplemental data:
//
//	ciphertext | tag (8 bytes, truncated) | nonce (ULEB128 of a 32-bit
//	counter) | unencrypted ranges (ULEB128 offset, size pairs) |
//	supplemental size (1 byte) | 0xFAFA
//
// The 96-bit GCM nonce is 8 zero bytes then the counter as a little-endian
// uint32; the counter's top byte is the key generation. The unencrypted
// ranges (codec headers a packetizer must read) are the additional data.
// Opus frames are encrypted whole.

const (
	tagSize         = 8
	magicMarker     = 0xFAFA
	minSupplemental = tagSize + 1 + 2
	generationShift = 24
)

// opusSilence is the Opus silence frame, sent and accepted unencrypted.
var opusSilence = []byte{0xF8, 0xFF, 0xFE}

func frameNonce(counter uint32) []byte {
	n := make([]byte, aeadNonce)
	binary.LittleEndian.PutUint32(n[8:], counter)
	return n
}

func appendULEB128(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func readULEB128(b []byte) (v uint64, n int, ok bool) {
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1, true
		}
	}
	return 0, 0, false
}

// Encryptor encrypts this member's outgoing Opus frames. It is not safe for
// concurrent use.
type Encryptor struct {
	group      *group // the epoch it belongs to
	ratchet    *keyRatchet
	counter    uint32
	generation uint32
	aead       cipher.AEAD
}

// EncryptOpus returns the DAVE frame for an Opus frame.
func (e *Encryptor) EncryptOpus(frame []byte) ([]byte, error) {
	if e == nil || e.ratchet == nil {
		return nil, errNoKey
	}
	e.counter++
	gen := wrappedGeneration(e.generation, e.counter>>generationShift)
	if e.aead == nil || gen != e.generation {
		key, err := e.ratchet.key(gen)
		if err != nil {
			return nil, err
		}
		if e.aead, err = newGCM(key); err != nil {
			return nil, err
		}
		e.ratchet.forget(gen)
		e.generation = gen
	}
	sealed := e.aead.Seal(nil, frameNonce(e.counter), frame, nil)
	out := append(sealed[:len(frame)+tagSize:len(frame)+tagSize], nil...)
	out = appendULEB128(out, uint64(e.counter))
	supplemental := len(out) - len(frame) + 1 + 2
	out = append(out, byte(supplemental), magicMarker>>8, magicMarker&0xff)
	return out, nil
}

// wrappedGeneration widens an 8-bit generation from a nonce to the full
// generation, assuming it does not go backwards past oldest (libdave's
// ComputeWrappedGeneration).
func wrappedGeneration(oldest, gen uint32) uint32 {
	rem := oldest % 256
	factor := oldest / 256
	if gen < rem {
		factor++
	}
	return factor*256 + gen
}

// Decryptor decrypts one sender's frames. It is not safe for concurrent
// use.
type Decryptor struct {
	ratchet *keyRatchet
	oldest  uint32 // the oldest generation still accepted
	newest  uint64 // the newest (generation<<24 | counter) seen, plus one
	missing map[uint64]bool
}

const maxMissing = 1000

var errReplay = errors.New("dave: frame replayed or too old")

// Decrypt returns the plaintext of a DAVE frame. The Opus silence frame
// passes through as it is.
func (d *Decryptor) Decrypt(frame []byte) ([]byte, error) {
	if bytes.Equal(frame, opusSilence) {
		return frame, nil
	}
	if d == nil || d.ratchet == nil {
		return nil, errNoKey
	}
	if len(frame) < minSupplemental || binary.BigEndian.Uint16(frame[len(frame)-2:]) != magicMarker {
		return nil, errors.New("dave: not an encrypted frame (no 0xFAFA marker)")
	}
	supp := int(frame[len(frame)-3])
	if supp < minSupplemental || supp > len(frame) {
		return nil, fmt.Errorf("dave: supplemental size %d out of range", supp)
	}
	body := frame[:len(frame)-supp]
	tag := frame[len(frame)-supp : len(frame)-supp+tagSize]
	meta := frame[len(frame)-supp+tagSize : len(frame)-3]
	nonce64, n, ok := readULEB128(meta)
	if !ok || nonce64 > 0xffffffff {
		return nil, errors.New("dave: bad nonce")
	}
	counter := uint32(nonce64)
	meta = meta[n:]
	type span struct{ off, size int }
	var ranges []span
	for len(meta) > 0 {
		off, n1, ok1 := readULEB128(meta)
		if !ok1 {
			return nil, errors.New("dave: bad unencrypted range")
		}
		size, n2, ok2 := readULEB128(meta[n1:])
		if !ok2 {
			return nil, errors.New("dave: bad unencrypted range")
		}
		meta = meta[n1+n2:]
		ranges = append(ranges, span{int(off), int(size)})
	}
	// Ranges in order, not overlapping, inside the frame.
	var aad, ct []byte
	at := 0
	for _, r := range ranges {
		if r.off < at || r.off > len(body) || r.size < 0 || r.size > len(body)-r.off {
			return nil, errors.New("dave: unencrypted ranges overlap or leave the frame")
		}
		ct = append(ct, body[at:r.off]...)
		aad = append(aad, body[r.off:r.off+r.size]...)
		at = r.off + r.size
	}
	ct = append(ct, body[at:]...)

	gen := wrappedGeneration(d.oldest, counter>>generationShift)
	big := uint64(gen)<<generationShift | uint64(counter&(1<<generationShift-1))
	if big < d.newest && !d.missing[big] {
		return nil, errReplay
	}
	key, err := d.ratchet.key(gen)
	if err != nil {
		return nil, err
	}
	pt, err := openTruncated(key, frameNonce(counter), ct, aad, tag)
	if err != nil {
		return nil, err
	}
	d.record(big)
	// Frames of the generation before the newest may still come late;
	// older keys go (libdave expires them after 10 s).
	if gen > 0 && gen-1 > d.oldest {
		d.oldest = gen - 1
		d.ratchet.forget(d.oldest)
	}

	// Put the plaintext back between the unencrypted ranges.
	out := make([]byte, 0, len(body))
	at, pi, ai := 0, 0, 0
	for _, r := range ranges {
		out = append(out, pt[pi:pi+r.off-at]...)
		pi += r.off - at
		out = append(out, aad[ai:ai+r.size]...)
		ai += r.size
		at = r.off + r.size
	}
	return append(out, pt[pi:]...), nil
}

func (d *Decryptor) record(big uint64) {
	if d.missing == nil {
		d.missing = map[uint64]bool{}
	}
	switch {
	case big >= d.newest:
		for m := max(d.newest, big-min(big, maxMissing)); m < big; m++ {
			d.missing[m] = true
		}
		d.newest = big + 1
		for m := range d.missing {
			if m+maxMissing < d.newest {
				delete(d.missing, m)
			}
		}
	default:
		delete(d.missing, big)
	}
}

// openTruncated opens AES-128-GCM with an 8-byte tag: Go's GCM takes tags
// of 12 to 16 bytes, so the ciphertext is decrypted with GCM's counter
// mode (counter block nonce||2 onwards, RFC: NIST SP 800-38D §7.2) and
// sealed again to compare the tag's first 8 bytes in constant time.
func openTruncated(key, nonce, ct, aad, tag []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	iv := make([]byte, 16)
	copy(iv, nonce)
	iv[15] = 2
	pt := make([]byte, len(ct))
	cipher.NewCTR(block, iv).XORKeyStream(pt, ct)
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sealed := gcm.Seal(nil, nonce, pt, aad)
	if subtle.ConstantTimeCompare(sealed[len(pt):len(pt)+tagSize], tag) != 1 {
		return nil, errors.New("dave: frame authentication failed")
	}
	return pt, nil
}
