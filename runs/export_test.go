package runs

// ReadShardBytes is ReadShardFile on data; verify false skips the
// checksum and the comparison with what Write writes, which the fuzz
// test's changes would nearly all fail.
func ReadShardBytes(name string, data []byte, verify bool) (*ShardFile, error) {
	return readShardFile(name, data, verify)
}
