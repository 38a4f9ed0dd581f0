import { Layout } from '../components/layout.js';

export function JobPage({ id }: { id: string }) {
  return (
    <Layout title="Job">
      <p>{id}</p>
    </Layout>
  );
}
