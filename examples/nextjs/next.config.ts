import type { NextConfig } from 'next';

// Next.js reports anonymous usage to its makers unless told not to; this example reaches no network at build or run
// time (no telemetry, no Google fonts, no remote images). Next reads the variable after loading this file.
process.env.NEXT_TELEMETRY_DISABLED ??= '1';

const config: NextConfig = {
  // `dist/`, as every package of this repository builds to: ignored by git, ESLint and Prettier here.
  distDir: 'dist',
  // Nothing here uses the image optimizer, so its optional native dependency (sharp) is never loaded.
  images: { unoptimized: true },
};

export default config;
