import { headerString } from '@kairos/kafka';
import type { KafkaMessage } from 'kafkajs';
import type { Rejection } from './rejections.js';

/**
 * Which tenants each producer may send requests for. Kafka does not tell a consumer who produced
 * a record, so the source is read from the record itself: a header, or the key up to a
 * separator. That is only as trustworthy as the producers allowed to write the topic: Kafka ACLs
 * (README, "Restricting schedule-requests per tenant") make sure only known principals write it.
 */
export interface TenantSources {
  /** Where a request's source is read: a header's value, or its key up to the first separator. */
  readonly from: { readonly header: string } | { readonly keyPrefix: string };
  /** The tenants each source may send requests for; any other source is refused. */
  readonly allowed: ReadonlyMap<string, ReadonlySet<string>>;
}

/** The source a message names, or undefined when it names none. */
export function sourceOf(
  sources: TenantSources,
  message: Pick<KafkaMessage, 'key' | 'headers'>,
): string | undefined {
  if ('header' in sources.from) return headerString(message.headers, sources.from.header) || undefined;
  const key = message.key?.toString('utf8') ?? '';
  const at = key.indexOf(sources.from.keyPrefix);
  return at > 0 ? key.slice(0, at) : undefined;
}

const refuse = (message: string): Rejection => ({
  reason: 'UNKNOWN_TENANT',
  message,
  fields: [{ field: 'tenant', message: 'not allowed for this sender' }],
});

/** Why a request of `tenant` is refused (UNKNOWN_TENANT), or undefined when it may go on. */
export function tenantRefusal(
  tenant: string,
  message: Pick<KafkaMessage, 'key' | 'headers'>,
  allowList: ReadonlySet<string> | undefined,
  sources: TenantSources | undefined,
): Rejection | undefined {
  if (allowList && !allowList.has(tenant)) return refuse(`tenant "${tenant}" may not send requests here`);
  if (!sources) return undefined;
  const where = 'header' in sources.from ? `header ${sources.from.header}` : 'key prefix';
  const source = sourceOf(sources, message);
  if (source === undefined) return refuse(`the request names no source (${where}); every request must`);
  const tenants = sources.allowed.get(source);
  if (!tenants) return refuse(`source "${source}" (${where}) is not allowed to send requests`);
  if (!tenants.has(tenant)) return refuse(`source "${source}" may not send requests for tenant "${tenant}"`);
  return undefined;
}

/**
 * Parses `header:<name>` or `key-prefix:<separator>` and `source=tenant|tenant;source=tenant`.
 * Throws a RangeError naming what is wrong.
 */
export function parseTenantSources(from: string, map: string): TenantSources {
  const m = /^(header|key-prefix):(.+)$/.exec(from);
  if (!m?.[1] || !m[2])
    throw new RangeError(`tenant source "${from}" must be header:<name> or key-prefix:<separator>`);
  const allowed = new Map<string, Set<string>>();
  for (const entry of map
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [source, list] = entry.split('=').map((s) => s.trim());
    const tenants = (list ?? '')
      .split('|')
      .map((t) => t.trim())
      .filter(Boolean);
    if (!source || tenants.length === 0) {
      throw new RangeError(`tenant source entry "${entry}" must be source=tenant|tenant…`);
    }
    allowed.set(source, new Set(tenants));
  }
  if (allowed.size === 0) throw new RangeError('the source map must name at least one source');
  return { from: m[1] === 'header' ? { header: m[2] } : { keyPrefix: m[2] }, allowed };
}
