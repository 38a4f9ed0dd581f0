-- Kairos 0008: API keys. The secret is never stored: only its SHA-256 (a 256-bit random secret
-- needs no slow hash; nothing can be guessed from the digest). Rows are never deleted, so an
-- audit can always say which key did what; revoked_at ends a key's life.
CREATE TABLE api_keys (
  id           text        PRIMARY KEY,          -- public part of the key: k_<12 hex>
  name         text        NOT NULL,
  tenant_id    text        NOT NULL,             -- one tenant, or '*' for every tenant
  scopes       text[]      NOT NULL,
  secret_hash  bytea       NOT NULL,
  rate_per_sec integer,                          -- NULL: the API's default
  expires_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  created_by   text        NOT NULL,             -- the creating key's id, or 'bootstrap'
  revoked_at   timestamptz,
  revoked_by   text,
  CHECK (rate_per_sec IS NULL OR rate_per_sec > 0)
);

CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at);
