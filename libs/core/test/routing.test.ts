import { expect, test } from 'vitest';
import { RoutingTable, type RoutedWorker } from '../src/routing.js';

const worker = (service: string, types: string[], serviceTopics = true, classes = ['io']): RoutedWorker => ({
  service,
  serviceTopics,
  resourceClasses: classes,
  jobTypes: types,
});

test('a type goes to the service that handles it, never to another; nobody: it waits', () => {
  const t = new RoutingTable([worker('mailer', ['mail.send']), worker('billing', ['invoice.make'])]);
  expect(t.route('io', 'mail.send', 'j1')).toEqual({ kind: 'service', service: 'mailer' });
  expect(t.route('io', 'invoice.make', 'j1')).toEqual({ kind: 'service', service: 'billing' });
  expect(t.route('io', 'report.build', 'j1')).toEqual({ kind: 'waiting' });
  // Handled in another class only: waits in this one.
  expect(t.route('default', 'mail.send', 'j1')).toEqual({ kind: 'waiting' });
});

test('workers without service topics take their types on the class topic; a service of its own wins', () => {
  const t = new RoutingTable([
    worker('example', ['demo.hello', 'mail.send'], false),
    worker('mailer', ['mail.send']),
  ]);
  expect(t.route('io', 'demo.hello', 'j1')).toEqual({ kind: 'class' });
  expect(t.route('io', 'mail.send', 'j1')).toEqual({ kind: 'service', service: 'mailer' });
});

test('a type several services handle (a rolling move) is split by job id, each job always to the same one', () => {
  const t = new RoutingTable([worker('a', ['x']), worker('b', ['x']), worker('a', ['x'])]);
  const picks = Array.from({ length: 200 }, (_, i) => t.route('io', 'x', `job-${i}`));
  const names = new Set(picks.map((r) => (r.kind === 'service' ? r.service : r.kind)));
  expect(names).toEqual(new Set(['a', 'b']));
  for (let i = 0; i < 200; i++) expect(t.route('io', 'x', `job-${i}`)).toEqual(picks[i]);
});
