package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Every read of the mongo backend turns stored documents into Records. It walks the raw
// BSON once with the driver's own reader (bsoncore, which the bson package is built on) and
// appends JSON as it goes: no map, no reflection, no allocation per value. bson.Raw's
// Elements would validate every nested document again and allocate two slices per
// document.

var errBadBSON = errors.New("malformed BSON document")

// appendRecord appends the Record form of a stored document: "_id" becomes "uid", dates
// TimeLayout strings, numbers JSON numbers.
func appendRecord(b []byte, doc []byte) ([]byte, error) {
	return appendBSONDocument(b, doc, false, true)
}

// appendBSONDocument appends a document as a JSON object, or an array (whose keys are its
// indexes) as a JSON array. At the top, "_id" is the record's "uid".
func appendBSONDocument(b, doc []byte, array, top bool) ([]byte, error) {
	n, _, ok := bsoncore.ReadLength(doc)
	if !ok || n < 5 || int(n) > len(doc) || doc[n-1] != 0 {
		return b, errBadBSON
	}
	rem := doc[4 : n-1] // the elements, without the closing NUL
	open, end := byte('{'), byte('}')
	if array {
		open, end = '[', ']'
	}
	b = append(b, open)
	for first := true; len(rem) > 0; first = false {
		var el bsoncore.Element
		if el, rem, ok = bsoncore.ReadElement(rem); !ok {
			return b, errBadBSON
		}
		key, err := el.KeyBytesErr()
		if err != nil {
			return b, errBadBSON
		}
		val, err := el.ValueErr()
		if err != nil {
			return b, errBadBSON
		}
		if !first {
			b = append(b, ',')
		}
		switch {
		case array:
		case top && string(key) == mongoID:
			b = append(b, `"uid":`...)
		default:
			b = appendJSONString(b, key)
			b = append(b, ':')
		}
		if b, err = appendBSONValue(b, val); err != nil {
			return b, err
		}
	}
	return append(b, end), nil
}

func appendBSONValue(b []byte, v bsoncore.Value) ([]byte, error) {
	var ok bool
	switch v.Type {
	case bsoncore.TypeString:
		var s []byte
		if s, ok = stringBytes(v.Data); ok {
			b = appendJSONString(b, s)
		}
	case bsoncore.TypeDouble:
		var f float64
		if f, ok = v.DoubleOK(); ok {
			b = AppendJSONFloat(b, f)
		}
	case bsoncore.TypeInt32:
		var i int32
		if i, ok = v.Int32OK(); ok {
			b = strconv.AppendInt(b, int64(i), 10)
		}
	case bsoncore.TypeInt64:
		var i int64
		if i, ok = v.Int64OK(); ok {
			b = strconv.AppendInt(b, i, 10)
		}
	case bsoncore.TypeBoolean:
		var t bool
		if t, ok = v.BooleanOK(); ok {
			b = strconv.AppendBool(b, t)
		}
	case bsoncore.TypeDateTime:
		var ms int64
		if ms, ok = v.DateTimeOK(); ok {
			b = append(b, '"')
			b = time.UnixMilli(ms).UTC().AppendFormat(b, TimeLayout)
			b = append(b, '"')
		}
	case bsoncore.TypeNull, bsoncore.TypeUndefined:
		return append(b, "null"...), nil
	case bsoncore.TypeEmbeddedDocument:
		return appendBSONDocument(b, v.Data, false, false)
	case bsoncore.TypeArray:
		return appendBSONDocument(b, v.Data, true, false)
	case bsoncore.TypeObjectID:
		var id [12]byte
		if id, ok = v.ObjectIDOK(); ok {
			b = append(b, '"')
			b = hex.AppendEncode(b, id[:])
			b = append(b, '"')
		}
	default:
		// Types the service never writes (a record another program stored): their
		// extended JSON, which is JSON.
		return append(b, v.String()...), nil
	}
	if !ok {
		return b, errBadBSON
	}
	return b, nil
}

// stringBytes is the text of a BSON string value (int32 length, bytes, NUL) without
// copying it.
func stringBytes(data []byte) ([]byte, bool) {
	n, rem, ok := bsoncore.ReadLength(data)
	if !ok || n < 1 || int(n) > len(rem) {
		return nil, false
	}
	return rem[:n-1], true
}

// appendJSONString appends s as a JSON string, as encoding/json writes it (without its HTML
// escapes, which a Record does not need): invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 end lines in JavaScript; encoding/json escapes them too.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendJSONFloat writes f as encoding/json does; NaN and infinities, which JSON cannot
// hold, as null.
func AppendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// mongoDoc is the stored form of d: _id, _owner, the times, then the fields by name.
func mongoDoc(d Doc) bson.D {
	doc := make(bson.D, 0, len(d.Fields)+4)
	doc = append(doc,
		bson.E{Key: mongoID, Value: d.UID},
		bson.E{Key: KeyOwner, Value: d.Owner},
		bson.E{Key: KeyCreatedAt, Value: d.CreatedAt},
		bson.E{Key: KeyUpdatedAt, Value: d.UpdatedAt})
	keys := make([]string, 0, len(d.Fields))
	for k := range d.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := d.Fields[k]; v != nil { // a field set to nil is not set
			doc = append(doc, bson.E{Key: k, Value: v})
		}
	}
	return doc
}

// goValue reads a stored scalar back as the Go value a Filter uses: numbers as int64 or
// float64, dates as time.Time.
func goValue(v bson.RawValue) any {
	switch v.Type {
	case bson.TypeString:
		return v.StringValue()
	case bson.TypeInt32:
		return int64(v.Int32())
	case bson.TypeInt64:
		return v.Int64()
	case bson.TypeDouble:
		return v.Double()
	case bson.TypeBoolean:
		return v.Boolean()
	case bson.TypeDateTime:
		return v.Time().UTC()
	case bson.TypeNull, bson.TypeUndefined, 0:
		return nil
	}
	return fmt.Sprint(v)
}
