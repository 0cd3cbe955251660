/**
 * The layout is the pipeline: a folder of src/ imports only folders below it in this list, so no
 * pair of folders imports each other and a lower part never depends on a higher one (`npm run
 * check:deps`, run in CI). A sub-folder may be a layer of its own, below its parent
 * (schedules/housekeeping: the parent imports it, it never imports the parent). workers/ are
 * process entry points: nothing in src/ imports them.
 */
// prettier-ignore
const layers = [
  'clock', // the time interval decisions read (injectable: tests run on virtual time)
  'errors',
  'input', // bounds of what comes from outside (depth, size), checked before it is parsed or walked
  'log', 'filter',
  'client', 'redis', 'metrics', 'config',
  'alerts', // the alert, raised in one place (audit, then notifier: both by the narrow interfaces it declares), inhibition
  'audit',
  'retention', // bounds of what Reflex keeps in Redis: trimming, sizes against budgets, memory level
  'schedules/housekeeping', // housekeeping: names, retention, the plan of one instance, a job's steps; below the actions registry that runs them
  'events', // leaf of the pipeline: frames → canonical events → intent → settled status; subscriber, ingestor, archive, state tracker, resync
  'silences', // maintenance windows muting actions and notifications: the gate, the re-check and the notifier read them
  'notify', 'actions', 'schedules',
  'probes', // health probes: an event source (checks → thresholds → instance.health events), defined in the rules folder
  'rules', // the rules folder's one home: loaded once into rules, actions, schedules, probes and receivers; the engine; reload
  'remediation', // incident → decide → admit → job → re-check → instance call → outcome
  'http', 'simulator', 'app', 'doctor', 'demo', 'cli',
];

const folder = (names) => `^src/(${names.join('|')})/`;

module.exports = {
  forbidden: [
    ...layers.slice(0, -1).map((name, i) => ({
      name: `${name}-imports-upward`,
      comment: `src/${name}/ may import only folders below it in the layer order (.dependency-cruiser.cjs)`,
      severity: 'error',
      from: { path: folder([name]) },
      // A sub-folder layer below its parent (schedules/housekeeping) is not "upward" for the layers between them.
      to: { path: folder(layers.slice(i + 1)), pathNot: folder(layers.slice(0, i + 1)) },
    })),
    {
      name: 'src-imports-workers',
      comment: 'workers/ only wire; nothing in src/ imports them',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^workers/' },
    },
    {
      name: 'no-circular',
      comment: 'no module cycles, type-only imports included: a loop of types still ties two modules into one',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
