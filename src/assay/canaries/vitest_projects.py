"""How the planted vitest configuration carries the canaries into each of `projects`.

vitest takes a multi-project run's tests from each project's own configuration, never from
the root's. So each entry of `test.projects` (or vitest 3's `test.workspace` list) is
resolved as vitest resolves it (its `resolveTestProjectConfigs`): a string is a
configuration file, or a directory with or without one of its own, named directly or by a
glob from the root's directory; anything else is a configuration object, or a function or
promise of one, which may extend a configuration file (`extends`, `true` for the root's).
Each becomes an object that vitest takes as the project itself: what a file holds is read
by the running vite's loader as vitest reads it (with the project's loader, which vitest
would use; the planted configuration's own is native), the project keeps the name vitest
would give it (its `test.name`, else its directory's package.json name or the directory's
name; an object's position), and a plugin adds the setup file and the exclude pattern to
its configuration once its own plugins have had their say.

vitest 3 also reads projects from a `vitest.workspace.*` file, which it imports through
its own module runner: that cannot be read here, and such a run is refused.
"""

from __future__ import annotations

#: JavaScript run inside the planted configuration: `carried(config, env)` is the root's
#: configuration with its projects carrying the canaries. It uses the wrapper's `find`,
#: `vitestConfig`, `vitePath`, `configDefaults`, `names`, `projectFile`, `load`, `cliRoot`,
#: `setup`, `excluded` and `mark`.
PROJECTS = """\
const { glob, isDynamicPattern } = await import(
  pathToFileURL(find("tinyglobby", [vitestConfig])).href
);
const { mergeConfig } = await import(pathToFileURL(vitePath).href);
const vitestMajor = Number(
  JSON.parse(readFileSync(find("vitest/package.json", [vitestConfig]), "utf8")).version
    .split(".")[0],
);
// vitest.config.* and vite.config.*, and vitest.unit.config.* and the like.
const configPattern = /^vite(?:st)?(?:\\.[\\w-]+)?\\.config\\./;
const workspaceFiles = ["vitest.workspace", "vitest.projects"].flatMap((name) =>
  [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".json"].map((ext) => name + ext),
);

function directoryConfig(directory) {
  const files = new Set(readdirSync(directory));
  const found = names.find((name) => files.has(name));
  return found ? resolve(directory, found) : null;
}

function configFile(file, base) {
  if (vitestMajor >= 4 && !configPattern.test(basename(file))) {
    throw new Error(
      `The file "${relative(base, file)}" must start with "vitest.config"/"vite.config" ` +
        'or match the pattern "(vitest|vite).*.config.*" to be a valid project config.',
    );
  }
  return file;
}

// The name vitest gives a project of a file or directory that names none: the directory's
// package.json name, else the directory's own.
function defaultName(path) {
  const directory = path.endsWith("/") ? path.slice(0, -1) : dirname(path);
  const manifest = resolve(directory, "package.json");
  const name = existsSync(manifest) ? JSON.parse(readFileSync(manifest, "utf8")).name : "";
  return typeof name === "string" && name ? name : basename(directory);
}

// Runs after the project's own plugins and before vitest's: the project's configuration is
// whole then, and vitest names it from what this leaves.
function carrier(name) {
  return {
    name: mark,
    config(config) {
      const test = (config.test ??= {});
      const label = typeof test.name === "string" ? test.name : test.name && test.name.label;
      if (name !== undefined && !label) {
        test.name = test.name && typeof test.name === "object" ? { ...test.name, label: name } : name;
      }
      test.setupFiles = [...[test.setupFiles || []].flat(), setup];
      test.exclude = [...(test.exclude || configDefaults.exclude), excluded];
    },
  };
}

function withCarrier(config, name) {
  return { ...config, plugins: [...[config.plugins || []], carrier(name)] };
}

// What vitest reads a file project as: the file, at the file's directory.
async function fileProject(file, env) {
  const { extends: _, ...config } = (await load(env, file)).config;
  return withCarrier({ ...config, root: dirname(file) }, defaultName(file));
}

// An object: one that extends a file is that file's configuration under the object's, as
// vite merges them; it keeps vitest's root, which is the object's or the root's.
async function objectProject(options, env, base) {
  const { extends: from, ...own } = options;
  const file = typeof from === "string" ? resolve(base, from) : from === true ? projectFile : null;
  if (!file) return withCarrier(own);
  const { extends: _, root: __, ...extended } = (await load(env, file)).config;
  const merged = mergeConfig(extended, { ...own, root: undefined });
  // vitest 4 gives such a project the object's own tags, not the file's.
  if (vitestMajor >= 4 && merged.test) merged.test.tags = own.test && own.test.tags;
  return withCarrier({ ...merged, root: own.root });
}

async function carriedProjects(definitions, env, base) {
  const objects = [];
  const files = [];
  const directories = [];
  const patterns = [];
  for (const definition of definitions) {
    if (typeof definition !== "string") {
      // Each object becomes a function, which vitest calls in its turn, as it awaits each.
      objects.push(async (e) =>
        objectProject(typeof definition === "function" ? await definition(e) : await definition, e, base),
      );
    } else if (isDynamicPattern(definition.replace("<rootDir>", base))) {
      patterns.push(definition.replace("<rootDir>", base));
    } else {
      const file = resolve(base, definition.replace("<rootDir>", base));
      if (!existsSync(file)) {
        throw new Error(`Projects definition references a non-existing file or a directory: ${file}`);
      }
      const found = statSync(file).isDirectory() ? directoryConfig(file) : configFile(file, base);
      if (found) files.push(found);
      else directories.push(file.endsWith("/") ? file : `${file}/`);
    }
  }
  const matched = patterns.length
    ? await glob(patterns, {
        absolute: true,
        dot: true,
        onlyFiles: false,
        cwd: base,
        expandDirectories: false,
        ignore: ["**/node_modules/**", "**/*.timestamp-*", "**/.DS_Store"],
      })
    : [];
  for (const path of matched) {
    const found = path.endsWith("/") ? directoryConfig(path) : configFile(path, base);
    if (found) files.push(found);
    else directories.push(path);
  }
  if ([...new Set(files)].some((file) => file === projectFile)) {
    throw new Error("planted tests: a project that is the root configuration cannot carry them");
  }
  // vitest's order: objects, then files, then directories without one.
  return [
    ...objects,
    ...(await Promise.all([...new Set(files)].map((file) => fileProject(file, env)))),
    ...directories.map((directory) =>
      withCarrier({ root: directory }, defaultName(directory)),
    ),
  ];
}

async function carried(config, env) {
  const test = config.test || {};
  const base = resolve(test.root || cliRoot || config.root || ".");
  const key = test.projects ? "projects" : Array.isArray(test.workspace) ? "workspace" : null;
  if (key === null && test.workspace !== undefined && vitestMajor < 4) {
    throw new Error("planted tests: a `workspace` file cannot carry them");
  }
  if (key === null && vitestMajor < 4) {
    const where = projectFile ? dirname(projectFile) : base;
    const file = workspaceFiles.find((name) => existsSync(resolve(where, name)));
    if (file) throw new Error(`planted tests: a ${file} file cannot carry them`);
  }
  if (key === null) return null;
  const projects = await carriedProjects(test[key], env, base);
  return { ...config, test: { ...test, [key]: projects, bail: 0 } };
}
"""
