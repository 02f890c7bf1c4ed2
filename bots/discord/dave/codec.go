package dave

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/cryptobyte"
)

// MLS uses the TLS presentation language (RFC 8446 §3) with one change:
// variable-size vectors (`opaque x<V>`) carry their length as a QUIC-style
// variable-length integer of 1, 2 or 4 bytes (RFC 9420 §2.1.2), which
// cryptobyte does not have. readVec and addVec add it on top of cryptobyte.

var errShort = errors.New("truncated or malformed encoding")

// readVarint reads an RFC 9420 §2.1.2 variable-length integer: the two top
// bits of the first byte give its size (00: 1 byte, 01: 2, 10: 4). The
// minimum encoding is required.
func readVarint(s *cryptobyte.String, out *uint32) bool {
	var b byte
	if !s.ReadUint8(&b) {
		return false
	}
	switch b >> 6 {
	case 0:
		*out = uint32(b)
		return true
	case 1:
		var lo byte
		if !s.ReadUint8(&lo) {
			return false
		}
		v := uint32(b&0x3f)<<8 | uint32(lo)
		if v < 1<<6 {
			return false
		}
		*out = v
		return true
	case 2:
		var rest [3]byte
		if !s.CopyBytes(rest[:]) {
			return false
		}
		v := uint32(b&0x3f)<<24 | uint32(rest[0])<<16 | uint32(rest[1])<<8 | uint32(rest[2])
		if v < 1<<14 {
			return false
		}
		*out = v
		return true
	}
	return false
}

func addVarint(b *cryptobyte.Builder, n int) {
	switch {
	case n < 1<<6:
		b.AddUint8(uint8(n))
	case n < 1<<14:
		b.AddUint16(uint16(n) | 0x4000)
	case n < 1<<30:
		b.AddUint32(uint32(n) | 0x80000000)
	default:
		b.SetError(fmt.Errorf("vector of %d bytes is too long for MLS", n))
	}
}

// readVec reads `opaque x<V>` into out (sharing s's memory).
func readVec(s *cryptobyte.String, out *cryptobyte.String) bool {
	var n uint32
	if !readVarint(s, &n) {
		return false
	}
	return s.ReadBytes((*[]byte)(out), int(n))
}

// readOpaque reads `opaque x<V>` into a fresh copy.
func readOpaque(s *cryptobyte.String, out *[]byte) bool {
	var v cryptobyte.String
	if !readVec(s, &v) {
		return false
	}
	*out = append([]byte{}, v...)
	return true
}

// addVec writes what f builds as `opaque x<V>`.
func addVec(b *cryptobyte.Builder, f func(*cryptobyte.Builder)) {
	var c cryptobyte.Builder
	f(&c)
	body, err := c.Bytes()
	if err != nil {
		b.SetError(err)
		return
	}
	addVarint(b, len(body))
	b.AddBytes(body)
}

func addOpaque(b *cryptobyte.Builder, v []byte) {
	addVarint(b, len(v))
	b.AddBytes(v)
}

// readList reads a vector of structs, calling item until it is consumed.
func readList(s *cryptobyte.String, item func(*cryptobyte.String) bool) bool {
	var v cryptobyte.String
	if !readVec(s, &v) {
		return false
	}
	for !v.Empty() {
		if !item(&v) {
			return false
		}
	}
	return true
}

// readOptional reads `optional<T>`: a presence byte (0 or 1) then T.
func readOptional(s *cryptobyte.String, present *bool) bool {
	var p uint8
	if !s.ReadUint8(&p) || p > 1 {
		return false
	}
	*present = p == 1
	return true
}

func addBool(b *cryptobyte.Builder, v bool) {
	if v {
		b.AddUint8(1)
	} else {
		b.AddUint8(0)
	}
}

// marshal runs f on a new builder and returns its bytes.
func marshal(f func(*cryptobyte.Builder)) []byte {
	var b cryptobyte.Builder
	f(&b)
	out, err := b.Bytes()
	if err != nil {
		// Builders here only fail on vectors over 2^30 bytes, which no
		// DAVE structure comes near; a failure is a bug, not bad input.
		panic(fmt.Sprintf("dave: encoding: %v", err))
	}
	return out
}
