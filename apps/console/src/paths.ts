/** Where the console lives on the API's origin, and the address of each page. */
export const BASE = '/console';

export const paths = {
  overview: `${BASE}/`,
  jobs: `${BASE}/jobs`,
  job: (id: string) => `${BASE}/jobs/${encodeURIComponent(id)}`,
  schedules: `${BASE}/schedules`,
  schedule: (id: string) => `${BASE}/schedules/${encodeURIComponent(id)}`,
  deadLetters: `${BASE}/dead-letters`,
  replay: (id: string) => `${BASE}/replays/${encodeURIComponent(id)}`,
  workers: `${BASE}/workers`,
};
