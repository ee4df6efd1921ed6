package left

func Pad(s string) string { return " " + s }
