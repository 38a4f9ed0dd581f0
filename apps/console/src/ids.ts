/**
 * An id short enough for a table cell or a title: a UUID's last group (12 characters). Job ids
 * are UUIDv7, whose first groups are the creation time, the same for every job of a second; the
 * last is random, so it tells them apart. (A whole group, so it is a word of a link's label
 * `job <id>`, as accessible names need.)
 */
export const shortId = (id: string): string => `…${id.slice(id.lastIndexOf('-') + 1)}`;
