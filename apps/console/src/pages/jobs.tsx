import { Layout } from '../components/layout.js';

export function Jobs() {
  return (
    <Layout title="Jobs">
      <p>Coming in this change.</p>
    </Layout>
  );
}
