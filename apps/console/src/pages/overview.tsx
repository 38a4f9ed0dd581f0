import { Layout } from '../components/layout.js';

export function Overview() {
  return (
    <Layout title="Overview">
      <p>Coming in this change.</p>
    </Layout>
  );
}
