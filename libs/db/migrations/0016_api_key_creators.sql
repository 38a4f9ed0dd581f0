-- Kairos 0016: keys found by their creator. `created_by` (0008) names the key that made each key;
-- revoking a key with `cascade` walks that relation down, transitively, so a key's children are
-- found through this index instead of a scan of every key.
CREATE INDEX api_keys_created_by_idx ON api_keys (created_by);
