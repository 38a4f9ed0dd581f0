import { Layout } from '../components/layout.js';

export function ReplayPage({ id }: { id: string }) {
  return (
    <Layout title="Replay">
      <p>{id}</p>
    </Layout>
  );
}
