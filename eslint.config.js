// The linter the test command runs (`npm run lint`, from pretest): typescript-eslint's
// recommended rules, the line length the code is written to and the naming it already follows.
// Unused names are left to tsc (noUnusedLocals, noUnusedParameters); `any` is allowed where JSON
// of unknown shape is read (tests, benchmarks, the routes' validated bodies).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'native/**', 'node_modules/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // 120 columns, as Prettier writes them (.prettierrc.json); long messages, regexps and URLs stay on one line for grep.
      'max-len': ['error', { code: 120, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }],
      '@typescript-eslint/naming-convention': [
        'error',
        { selector: 'typeLike', format: ['PascalCase'] },
        { selector: ['function', 'classMethod'], format: ['camelCase'] },
        // Named after a GGML tensor type (toQ8_0).
        { selector: 'function', filter: { regex: '_\\d', match: true }, format: null },
        // TypeBox's recursive schemas name their self-reference like a type (Type.Recursive((Tree) => ...)).
        { selector: 'parameter', format: ['camelCase', 'PascalCase'], leadingUnderscore: 'allow' },
        // Constants may be UPPER_CASE; TypeBox schemas share their type's PascalCase name; a
        // trailing underscore stands in for a reserved word (public_).
        { selector: 'variable', format: ['camelCase', 'UPPER_CASE', 'PascalCase'], leadingUnderscore: 'allow', trailingUnderscore: 'allow' },
      ],
    },
  },
);
