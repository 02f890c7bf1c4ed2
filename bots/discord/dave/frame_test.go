package dave

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
)

func testRatchets(t *testing.T) (*Encryptor, *Decryptor) {
	t.Helper()
	base := make([]byte, aeadKey)
	if _, err := rand.Read(base); err != nil {
		t.Fatal(err)
	}
	return &Encryptor{ratchet: newKeyRatchet(base)}, &Decryptor{ratchet: newKeyRatchet(bytes.Clone(base))}
}

func TestULEB128(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1<<21 - 1, 1 << 21, 1<<32 - 1} {
		b := appendULEB128(nil, v)
		got, n, ok := readULEB128(b)
		if !ok || n != len(b) || got != v {
			t.Errorf("%d: encoded %x, read %d (%d bytes, ok %v)", v, b, got, n, ok)
		}
	}
	if _, _, ok := readULEB128([]byte{0x80, 0x80}); ok {
		t.Error("read an unterminated ULEB128")
	}
}

func TestFrameRoundTrip(t *testing.T) {
	enc, dec := testRatchets(t)
	frame := []byte("an opus frame")
	var frames [][]byte
	for range 5 {
		out, err := enc.EncryptOpus(frame)
		if err != nil {
			t.Fatal(err)
		}
		// Layout: ciphertext, 8-byte tag, 1-byte nonce, size, marker.
		if len(out) != len(frame)+8+1+1+2 || out[len(out)-3] != 12 || out[len(out)-2] != 0xfa || out[len(out)-1] != 0xfa {
			t.Fatalf("frame layout: %x", out)
		}
		frames = append(frames, out)
	}
	// Out of order within the window is fine, once each.
	for _, i := range []int{1, 0, 3, 2, 4} {
		got, err := dec.Decrypt(frames[i])
		if err != nil || !bytes.Equal(got, frame) {
			t.Fatalf("frame %d: %q, %v", i, got, err)
		}
	}
	for i := range frames {
		if _, err := dec.Decrypt(frames[i]); !errors.Is(err, errReplay) {
			t.Errorf("replayed frame %d: %v", i, err)
		}
	}
}

func TestFrameTampering(t *testing.T) {
	enc, dec := testRatchets(t)
	out, err := enc.EncryptOpus([]byte("an opus frame"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(out) - 3 { // every byte of ciphertext, tag and nonce
		bad := bytes.Clone(out)
		bad[i] ^= 0x01
		if got, err := dec.Decrypt(bad); err == nil {
			t.Errorf("byte %d changed, still decrypted to %q", i, got)
		}
	}
	if _, err := dec.Decrypt(out[:len(out)-1]); err == nil {
		t.Error("a frame without its marker decrypted")
	}
	// The Opus silence frame passes, as libdave lets it.
	if got, err := dec.Decrypt(opusSilence); err != nil || !bytes.Equal(got, opusSilence) {
		t.Errorf("silence: %x, %v", got, err)
	}
	// Another sender's key does not open it.
	_, other := testRatchets(t)
	if _, err := other.Decrypt(out); err == nil {
		t.Error("another key opened the frame")
	}
}

// TestFrameGenerations crosses a key generation: the counter's top byte is
// the generation, so frame 2^24 is the first of generation 1.
func TestFrameGenerations(t *testing.T) {
	enc, dec := testRatchets(t)
	enc.counter = 1<<24 - 2
	dec.newest = 1<<24 - 2
	for i := range 3 {
		out, err := enc.EncryptOpus([]byte{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := dec.Decrypt(out)
		if err != nil || !bytes.Equal(got, []byte{byte(i)}) {
			t.Fatalf("frame %d (counter %#x): %x, %v", i, enc.counter, got, err)
		}
	}
	if enc.generation != 1 {
		t.Errorf("generation %d after crossing, want 1", enc.generation)
	}
}

// TestFrameUnencryptedRanges decrypts a frame with codec header bytes left
// in the clear (as video codecs have), built here by hand.
func TestFrameUnencryptedRanges(t *testing.T) {
	base := make([]byte, aeadKey)
	r := newKeyRatchet(base)
	key, err := r.key(0)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := newGCM(key)
	if err != nil {
		t.Fatal(err)
	}
	// Frame: HH pppp H ppp, H in the clear at offsets 0 (2 bytes) and 6 (1).
	plain := []byte("HHppppHppp")
	aad := []byte("HHH")
	secret := []byte("ppppppp")
	sealed := aead.Seal(nil, frameNonce(1), secret, aad)
	ct, tag := sealed[:len(secret)], sealed[len(secret):len(secret)+tagSize]
	body := append(append(append(append([]byte("HH"), ct[:4]...), 'H'), ct[4:]...), tag...)
	body = append(body, 1)          // nonce
	body = append(body, 0, 2, 6, 1) // ranges
	body = append(body, byte(tagSize+1+4+1+2), 0xfa, 0xfa)
	dec := &Decryptor{ratchet: newKeyRatchet(base)}
	got, err := dec.Decrypt(body)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("got %q, %v; want %q", got, err, plain)
	}
}

// TestFrameGenerationWrap crosses the 8-bit generation's wrap: the 32-bit
// counter overflows into generation 256, whose nonce byte is 0 again.
func TestFrameGenerationWrap(t *testing.T) {
	enc, dec := testRatchets(t)
	for _, r := range []*keyRatchet{enc.ratchet, dec.ratchet} {
		for _, g := range []uint32{200, 255} {
			if _, err := r.key(g); err != nil {
				t.Fatal(err)
			}
		}
	}
	enc.counter, enc.generation = 1<<32-2, 255
	dec.oldest, dec.newest = 254, 255<<generationShift
	for i := range 3 {
		out, err := enc.EncryptOpus([]byte{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := dec.Decrypt(out)
		if err != nil || !bytes.Equal(got, []byte{byte(i)}) {
			t.Fatalf("frame %d (counter %#x, generation %d): %x, %v", i, enc.counter, enc.generation, got, err)
		}
	}
	if enc.generation != 256 || dec.oldest != 255 {
		t.Errorf("after the wrap: encryptor generation %d (want 256), decryptor oldest %d (want 255)", enc.generation, dec.oldest)
	}
}
