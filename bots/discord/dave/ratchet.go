package dave

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The DAVE per-sender key ratchet (DAVE protocol whitepaper, "Sender key
// derivation"; libdave's MlsKeyRatchet): each sender's base secret is the
// MLS exporter's output for label "Discord Secure Frames v0" and the
// sender's user ID as a little-endian uint64, 16 bytes long. From it an
// MLS hash ratchet (RFC 9420 §9.1) gives one AES-128 key per generation.

const exporterLabel = "Discord Secure Frames v0"

// maxGenerationGap bounds how far ahead of the newest generation a frame
// may jump (libdave's kMaxGenerationGap).
const maxGenerationGap = 250

// keyRatchet yields the frame key of each generation for one sender.
type keyRatchet struct {
	next       []byte // the secret of generation nextGen
	nextGen    uint32
	keys       map[uint32][]byte
	oldestKept uint32
}

func newKeyRatchet(base []byte) *keyRatchet {
	return &keyRatchet{next: base, keys: map[uint32][]byte{}}
}

// key returns generation gen's key: RFC 9420 §9.1's
// ExpandWithLabel(secret, "key", generation, 16) with the generation as a
// big-endian uint32, advancing the secret with "secret" as needed.
func (r *keyRatchet) key(gen uint32) ([]byte, error) {
	if k, ok := r.keys[gen]; ok {
		return k, nil
	}
	if gen < r.nextGen {
		return nil, fmt.Errorf("key generation %d was deleted", gen)
	}
	if gen-r.nextGen > maxGenerationGap {
		return nil, fmt.Errorf("key generation %d is more than %d ahead of %d", gen, maxGenerationGap, r.nextGen)
	}
	for r.nextGen <= gen {
		ctx := binary.BigEndian.AppendUint32(nil, r.nextGen)
		r.keys[r.nextGen] = expandWithLabel(r.next, "key", ctx, aeadKey)
		r.next = expandWithLabel(r.next, "secret", ctx, hashSize)
		r.nextGen++
	}
	return r.keys[gen], nil
}

// forget deletes the keys of generations before gen.
func (r *keyRatchet) forget(gen uint32) {
	for g := range r.keys {
		if g < gen {
			delete(r.keys, g)
		}
	}
}

var errNoKey = errors.New("dave: no key for this sender yet")
