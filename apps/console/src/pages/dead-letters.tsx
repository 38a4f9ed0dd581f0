import { Layout } from '../components/layout.js';

export function DeadLetters() {
  return (
    <Layout title="Dead letters">
      <p>Coming in this change.</p>
    </Layout>
  );
}
