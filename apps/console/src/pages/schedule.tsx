import { Layout } from '../components/layout.js';

export function SchedulePage({ id }: { id: string }) {
  return (
    <Layout title="Schedule">
      <p>{id}</p>
    </Layout>
  );
}
