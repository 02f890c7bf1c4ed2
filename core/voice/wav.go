package voice

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrNotPCM16 is returned by ParseWAV for a WAV file whose samples are not
// 16-bit integer PCM (float, 8-bit, 24-bit, µ-law…); Decode then hands the
// file to ffmpeg.
var ErrNotPCM16 = errors.New("wav: samples are not 16-bit PCM")

// ParseWAV reads a RIFF/WAVE file of 16-bit PCM. It walks the chunks (a LIST
// or fact chunk before the data is skipped) and accepts the length a
// streaming writer leaves in the header (espeak-ng --stdout writes
// 0x7fffffff): the data runs to the end of the file then.
func ParseWAV(data []byte) (Format, []byte, error) {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		return Format{}, nil, errors.New("wav: not a RIFF/WAVE file")
	}
	var f Format
	haveFmt := false
	p := 12
	for p+8 <= len(data) {
		id := string(data[p : p+4])
		size := int(binary.LittleEndian.Uint32(data[p+4 : p+8]))
		body := p + 8
		switch id {
		case "fmt ":
			if size < 16 || body+16 > len(data) {
				return Format{}, nil, errors.New("wav: short fmt chunk")
			}
			tag := binary.LittleEndian.Uint16(data[body:])
			channels := int(binary.LittleEndian.Uint16(data[body+2:]))
			rate := int(binary.LittleEndian.Uint32(data[body+4:]))
			bits := binary.LittleEndian.Uint16(data[body+14:])
			if tag == 0xFFFE && size >= 40 && body+26 <= len(data) {
				// WAVE_FORMAT_EXTENSIBLE: the sub-format's first two bytes
				// are the real tag.
				tag = binary.LittleEndian.Uint16(data[body+24:])
			}
			if tag != 1 || bits != 16 {
				return Format{}, nil, fmt.Errorf("%w (format tag %d, %d bits)", ErrNotPCM16, tag, bits)
			}
			if channels < 1 || rate < 1 {
				return Format{}, nil, fmt.Errorf("wav: %d channels at %d Hz", channels, rate)
			}
			f = Format{SampleRate: rate, Channels: channels}
			haveFmt = true
		case "data":
			if !haveFmt {
				return Format{}, nil, errors.New("wav: data chunk before fmt chunk")
			}
			end := body + size
			if size < 0 || end > len(data) || end < body {
				end = len(data)
			}
			pcm := data[body:end]
			frame := 2 * f.Channels
			pcm = pcm[:len(pcm)-len(pcm)%frame]
			return f, pcm, nil
		}
		next := body + size + size%2 // chunks are word-aligned
		if next <= p || next > len(data) {
			break
		}
		p = next
	}
	return Format{}, nil, errors.New("wav: no data chunk")
}

// EncodeWAV writes PCM in format f as a RIFF/WAVE file with a 44-byte
// header.
func EncodeWAV(f Format, pcm []byte) []byte {
	var b bytes.Buffer
	b.Grow(44 + len(pcm))
	w32 := func(v uint32) { _ = binary.Write(&b, binary.LittleEndian, v) }
	w16 := func(v uint16) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w32(uint32(36 + len(pcm)))
	b.WriteString("WAVE")
	b.WriteString("fmt ")
	w32(16)
	w16(1)
	w16(uint16(f.Channels))
	w32(uint32(f.SampleRate))
	w32(uint32(f.SampleRate * f.Channels * 2))
	w16(uint16(f.Channels * 2))
	w16(16)
	b.WriteString("data")
	w32(uint32(len(pcm)))
	b.Write(pcm)
	return b.Bytes()
}

// Mono mixes interleaved PCM down to one channel (the mean of the
// channels). Mono input is returned as is.
func Mono(f Format, pcm []byte) []byte {
	if f.Channels <= 1 {
		return pcm
	}
	frame := 2 * f.Channels
	out := make([]byte, 0, len(pcm)/f.Channels)
	for i := 0; i+frame <= len(pcm); i += frame {
		sum := 0
		for c := 0; c < f.Channels; c++ {
			sum += int(int16(binary.LittleEndian.Uint16(pcm[i+2*c:])))
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(int16(sum/f.Channels)))
	}
	return out
}

// Resample converts mono PCM from one sample rate to another. Downsampling
// first low-passes with a windowed-sinc filter at the new Nyquist frequency
// so speech above it does not fold back as noise; the samples are then
// interpolated linearly. It is meant for speech, not music.
func Resample(pcm []byte, from, to int) []byte {
	if from == to || from <= 0 || to <= 0 || len(pcm) < 2 {
		return pcm
	}
	in := make([]float64, len(pcm)/2)
	for i := range in {
		in[i] = float64(int16(binary.LittleEndian.Uint16(pcm[2*i:])))
	}
	if to < from {
		in = lowPass(in, 0.5*float64(to)/float64(from))
	}
	n := int(int64(len(in)) * int64(to) / int64(from))
	out := make([]byte, 0, 2*n)
	step := float64(from) / float64(to)
	for i := 0; i < n; i++ {
		x := float64(i) * step
		j := int(x)
		frac := x - float64(j)
		a := in[j]
		b := a
		if j+1 < len(in) {
			b = in[j+1]
		}
		v := math.Round(a + (b-a)*frac)
		out = binary.LittleEndian.AppendUint16(out, uint16(clamp16(v)))
	}
	return out
}

// lowPass filters with a 31-tap Hann-windowed sinc whose cutoff is given as
// a fraction of the sample rate.
func lowPass(in []float64, cutoff float64) []float64 {
	const taps = 31
	h := make([]float64, taps)
	sum := 0.0
	for i := range h {
		m := float64(i - taps/2)
		s := 2 * cutoff
		if m != 0 {
			s = math.Sin(2*math.Pi*cutoff*m) / (math.Pi * m)
		}
		w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(taps-1))
		h[i] = s * w
		sum += h[i]
	}
	for i := range h {
		h[i] /= sum
	}
	out := make([]float64, len(in))
	for i := range in {
		acc := 0.0
		for k := range h {
			j := i + k - taps/2
			if j >= 0 && j < len(in) {
				acc += in[j] * h[k]
			}
		}
		out[i] = acc
	}
	return out
}

func clamp16(v float64) int16 {
	if v > math.MaxInt16 {
		return math.MaxInt16
	}
	if v < math.MinInt16 {
		return math.MinInt16
	}
	return int16(v)
}
