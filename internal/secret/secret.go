// Package secret seals the secrets Switchboard keeps in its database (bot
// tokens, OAuth tokens) so that neither a pg_dump nor the SQLite file holds
// one in clear text. A secret is sealed with AES-256-GCM under a key from
// SWITCHBOARD_SECRET_KEY and tagged with that key's id, so keys can be
// rotated: the first key seals, every listed key opens, and a secret sealed
// under an older key reports NeedsRotation until it is sealed again.
//
// A sealed value is bound to what it belongs to (the additional data, such
// as "slack_installation:T0123"): copied onto another row it does not open.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Setting is the environment variable the keys come from.
const Setting = "SWITCHBOARD_SECRET_KEY"

// ErrNoKey: no key is configured, so nothing may be stored.
var ErrNoKey = fmt.Errorf("secret: no key to seal with: set %s to a 32-byte key in base64 (for example: openssl rand -base64 32)", Setting)

// ErrOpen: the value does not open under any configured key (the wrong key,
// a key no longer listed, or a value moved onto another row).
var ErrOpen = errors.New("secret: the sealed value does not open with the configured keys")

// Sealed is a sealed secret as stored: "v1:<key id>:<base64 of nonce and
// ciphertext>".
type Sealed string

const version = "v1"

// KeyID returns the id of the key the value was sealed under.
func (s Sealed) KeyID() string {
	parts := strings.SplitN(string(s), ":", 3)
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}

// Keyring holds the keys. The zero value and nil hold none: Seal fails with
// ErrNoKey, naming the setting.
type Keyring struct {
	current string
	aeads   map[string]cipher.AEAD
	order   []string
}

// ParseKeys reads SWITCHBOARD_SECRET_KEY: one or more keys separated by
// commas, each a 32-byte key in base64, optionally preceded by an id and a
// colon ("2026-12:BASE64"). The first seals; all of them open. A key
// without an id gets one derived from the key itself. An empty value gives
// an empty keyring (and no error): storing a secret then fails, reading
// nothing does not.
func ParseKeys(value string) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
	for i, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, b64, ok := strings.Cut(part, ":")
		if !ok {
			id, b64 = "", part
		}
		raw, err := decodeKey(b64)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d: %w", Setting, i+1, err)
		}
		if id == "" {
			sum := sha256.Sum256(raw)
			id = "k" + hex.EncodeToString(sum[:4])
		}
		if strings.ContainsAny(id, ": ") {
			return nil, fmt.Errorf("%s: key %d: the id %q may not contain a colon or a space", Setting, i+1, id)
		}
		if _, dup := k.aeads[id]; dup {
			return nil, fmt.Errorf("%s: key id %q is listed twice", Setting, id)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d: %w", Setting, i+1, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d: %w", Setting, i+1, err)
		}
		k.aeads[id] = aead
		k.order = append(k.order, id)
		if k.current == "" {
			k.current = id
		}
	}
	return k, nil
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err := enc.DecodeString(s); err == nil {
			if len(raw) != 32 {
				return nil, fmt.Errorf("the key is %d bytes; AES-256 needs 32 (openssl rand -base64 32)", len(raw))
			}
			return raw, nil
		}
	}
	return nil, errors.New("the key is not base64")
}

// Configured reports whether a key is there to seal with.
func (k *Keyring) Configured() bool { return k != nil && k.current != "" }

// CurrentID is the id of the key that seals; "" when none is configured.
func (k *Keyring) CurrentID() string {
	if k == nil {
		return ""
	}
	return k.current
}

// Seal seals plaintext for the row named by aad.
func (k *Keyring) Seal(plaintext []byte, aad string) (Sealed, error) {
	if !k.Configured() {
		return "", ErrNoKey
	}
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secret: making a nonce: %w", err)
	}
	out := aead.Seal(nonce, nonce, plaintext, []byte(aad))
	return Sealed(version + ":" + k.current + ":" + base64.RawStdEncoding.EncodeToString(out)), nil
}

// Open opens a value sealed for aad by any configured key.
func (k *Keyring) Open(s Sealed, aad string) ([]byte, error) {
	parts := strings.SplitN(string(s), ":", 3)
	if len(parts) != 3 || parts[0] != version {
		return nil, fmt.Errorf("%w: not a sealed value", ErrOpen)
	}
	if k == nil {
		return nil, fmt.Errorf("%w: no keys are configured (%s)", ErrOpen, Setting)
	}
	aead, ok := k.aeads[parts[1]]
	if !ok {
		return nil, fmt.Errorf("%w: it was sealed under key %q, which %s does not list", ErrOpen, parts[1], Setting)
	}
	raw, err := base64.RawStdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, fmt.Errorf("%w: damaged", ErrOpen)
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(aad))
	if err != nil {
		return nil, fmt.Errorf("%w: under key %q for %q", ErrOpen, parts[1], aad)
	}
	return plain, nil
}

// NeedsRotation reports whether s was sealed under a key other than the
// current one.
func (k *Keyring) NeedsRotation(s Sealed) bool { return k.Configured() && s.KeyID() != k.current }
