package dave

import (
	"testing"
)

// FuzzDecrypt feeds arbitrary frames to a decryptor: it must return an
// error or a plaintext, never panic.
func FuzzDecrypt(f *testing.F) {
	enc := &Encryptor{ratchet: newKeyRatchet(make([]byte, aeadKey))}
	frame, err := enc.EncryptOpus([]byte("an opus frame"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(frame)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f, 0xff, 20, 0xfa, 0xfa})
	f.Add(opusSilence)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &Decryptor{ratchet: newKeyRatchet(make([]byte, aeadKey))}
		_, _ = d.Decrypt(b)
	})
}

// FuzzHandshakeMessages feeds arbitrary bytes to the parsers of what the
// voice gateway relays: Welcomes, commits and proposals, key packages,
// ratchet trees, external senders.
func FuzzHandshakeMessages(f *testing.F) {
	gw, err := NewExternalSender()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(gw.Package())
	f.Add([]byte{0, 1, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 2, 0, 3, 0, 0, 0, 1, 0})
	f.Add([]byte{0, 2, 0x40, 0x05, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseWelcome(b)
		_, _ = parsePublicMessage(b)
		_, _ = parseKeyPackage(b)
		_, _ = parseGroupInfo(b)
		_, _ = parseGroupSecrets(b)
		if tr, err := readTree(b); err == nil {
			_ = tr.rootHash()
			_ = validateTree(tr, nil)
		}
		s, err := NewSession(1, 2)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.SetExternalSender(b)
	})
}
