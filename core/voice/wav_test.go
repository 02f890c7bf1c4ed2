package voice

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// tone is a sine at hz for d, at amplitude amp (0..1), mono.
func tone(f Format, hz float64, d time.Duration, amp float64) []byte {
	n := int(d.Seconds() * float64(f.SampleRate))
	out := make([]byte, 0, 2*n*f.Channels)
	for i := 0; i < n; i++ {
		v := int16(amp * 32767 * math.Sin(2*math.Pi*hz*float64(i)/float64(f.SampleRate)))
		for c := 0; c < f.Channels; c++ {
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		}
	}
	return out
}

// zeroCrossings counts sign changes: about 2×hz per second for a sine.
func zeroCrossings(pcm []byte) int {
	n := 0
	prev := int16(0)
	for i := 0; i+1 < len(pcm); i += 2 {
		v := int16(binary.LittleEndian.Uint16(pcm[i:]))
		if (prev < 0 && v >= 0) || (prev >= 0 && v < 0) {
			n++
		}
		prev = v
	}
	return n
}

func TestWAVRoundTrip(t *testing.T) {
	f := Format{SampleRate: 22050, Channels: 2}
	pcm := tone(f, 440, 100*time.Millisecond, 0.5)
	got, back, err := ParseWAV(EncodeWAV(f, pcm))
	if err != nil {
		t.Fatal(err)
	}
	if got != f || string(back) != string(pcm) {
		t.Fatalf("round trip: got %+v and %d bytes, want %+v and %d bytes", got, len(back), f, len(pcm))
	}
}

func TestParseWAVChunksAndStreamedLength(t *testing.T) {
	pcm := tone(Speech, 300, 50*time.Millisecond, 0.3)
	wav := EncodeWAV(Speech, pcm)
	// A LIST chunk (odd length, padded) between fmt and data.
	list := append([]byte("LIST"), 3, 0, 0, 0, 'a', 'b', 'c', 0)
	withList := append(append(append([]byte{}, wav[:36]...), list...), wav[36:]...)
	if _, got, err := ParseWAV(withList); err != nil || string(got) != string(pcm) {
		t.Fatalf("with a LIST chunk: err %v, %d bytes, want %d", err, len(got), len(pcm))
	}
	// A streaming writer's length (espeak-ng --stdout): the data runs to
	// the end of the file.
	streamed := append([]byte{}, wav...)
	binary.LittleEndian.PutUint32(streamed[40:], 0x7fffffff)
	if _, got, err := ParseWAV(streamed); err != nil || string(got) != string(pcm) {
		t.Fatalf("streamed length: err %v, %d bytes, want %d", err, len(got), len(pcm))
	}
	float := append([]byte{}, wav...)
	binary.LittleEndian.PutUint16(float[20:], 3)
	binary.LittleEndian.PutUint16(float[34:], 32)
	if _, _, err := ParseWAV(float); err == nil {
		t.Fatal("a float WAV was read as 16-bit PCM")
	}
	if _, _, err := ParseWAV([]byte("OggS not a wav")); err == nil {
		t.Fatal("an Ogg file was read as WAV")
	}
}

func TestMonoAndResample(t *testing.T) {
	stereo := Format{SampleRate: 48000, Channels: 2}
	pcm := tone(stereo, 440, time.Second, 0.5)
	mono := Mono(stereo, pcm)
	if len(mono) != len(pcm)/2 {
		t.Fatalf("mono: %d bytes from %d", len(mono), len(pcm))
	}
	down := Resample(mono, 48000, 16000)
	if len(down) != 2*16000 {
		t.Fatalf("resampled 1 s to %d bytes, want %d", len(down), 2*16000)
	}
	// The pitch survives: 440 Hz crosses zero about 880 times a second.
	if z := zeroCrossings(down); z < 860 || z > 900 {
		t.Fatalf("440 Hz resampled to 16 kHz crosses zero %d times, want about 880", z)
	}
	// A tone above the new Nyquist frequency is filtered, not folded back
	// at full strength.
	high := Resample(tone(Format{SampleRate: 48000, Channels: 1}, 11000, time.Second, 0.5), 48000, 16000)
	if l := Level(Speech, high); l > -20 {
		t.Fatalf("an 11 kHz tone resampled to 16 kHz is at %.1f dBFS, want it filtered below -20", l)
	}
	up := Resample(tone(Format{SampleRate: 8000, Channels: 1}, 440, time.Second, 0.5), 8000, 16000)
	if z := zeroCrossings(up); len(up) != 2*16000 || z < 860 || z > 900 {
		t.Fatalf("8 kHz → 16 kHz: %d bytes, %d crossings", len(up), z)
	}
}

func TestKind(t *testing.T) {
	for _, c := range []struct {
		data []byte
		want string
	}{
		{EncodeWAV(Speech, nil), "wav"},
		{[]byte("OggS\x00\x02"), "ogg"},
		{[]byte{0x1A, 0x45, 0xDF, 0xA3, 1}, "webm"},
		{[]byte("\x00\x00\x00\x20ftypM4A "), "mp4"},
		{[]byte("ID3\x04"), "mp3"},
		{[]byte("hello"), ""},
	} {
		if got := Kind(c.data); got != c.want {
			t.Errorf("Kind(%q) = %q, want %q", c.data[:4], got, c.want)
		}
	}
}
