import type { Expression, Node, SourceFile } from "typescript/unstable/ast";
import {
  isCallExpression,
  isExpressionStatement,
  isIdentifier,
  isNoSubstitutionTemplateLiteral,
  isPropertyAccessExpression,
  isStringLiteral,
  isVariableStatement,
} from "typescript/unstable/ast/is";

// Where a graph's subgraphs are, read from its source file the way the reference server's extractor reads them:
// a `.addNode("name", variable)` call on the builder the export is made from (followed through the file's
// top-level variables, `const builder = new StateGraph(…)…; export const graph = builder.compile()`), where
// `variable` is a top-level variable of the same file. Whether it is a graph is the type checker's call
// (ts-schemas.ts); anything else added as a node (a function) is dropped there.

export interface SubgraphRef {
  /** The subgraph's namespace: node names from the root graph down, as getSubgraphs(recurse) names them. */
  namespace: string[];
  /** Top-level variables the node is made of: the first the checker finds to be a graph is the subgraph. */
  variables: string[];
}

const MAX_NESTING = 3;

export function findSubgraphs(file: SourceFile, exportName: string): SubgraphRef[] {
  const initializers = new Map<string, Expression>();
  const statements = new Map<string, Expression[]>();
  for (const s of file.statements) {
    if (isVariableStatement(s)) {
      for (const d of s.declarationList.declarations)
        if (isIdentifier(d.name) && d.initializer) initializers.set(d.name.text, d.initializer);
    } else if (isExpressionStatement(s)) {
      // `builder.addNode(…)` as a statement of its own mutates the builder.
      const root = chainRoot(s.expression);
      if (root) statements.set(root, [...(statements.get(root) ?? []), s.expression]);
    }
  }
  const out: SubgraphRef[] = [];
  const walkGraph = (variable: string, prefix: string[], seen: Set<string>) => {
    if (prefix.length > MAX_NESTING || seen.has(variable)) return;
    seen.add(variable);
    const roots = [initializers.get(variable), ...(statements.get(variable) ?? [])];
    for (const root of roots) if (root) visit(root, prefix, seen);
  };
  const visit = (node: Node, prefix: string[], seen: Set<string>): void => {
    if (isCallExpression(node) && isPropertyAccessExpression(node.expression)) {
      const callee = node.expression;
      const [name, target] = node.arguments;
      if (isIdentifier(callee.name) && callee.name.text === "addNode" && name && target && nameOf(name)) {
        const namespace = [...prefix, nameOf(name) as string];
        const variables = isIdentifier(target) ? [target.text] : variablesIn(target, initializers);
        const known = variables.filter((v) => initializers.has(v));
        if (known.length) {
          out.push({ namespace, variables: known });
          for (const v of known) walkGraph(v, namespace, new Set());
        }
        visit(callee.expression, prefix, seen);
        return;
      }
    }
    if (isIdentifier(node)) {
      if (initializers.has(node.text) || statements.has(node.text)) walkGraph(node.text, prefix, seen);
      return;
    }
    node.forEachChild((child) => visit(child, prefix, seen));
  };
  walkGraph(exportName, [], new Set());
  return out;
}

const nameOf = (n: Node) => (isStringLiteral(n) || isNoSubstitutionTemplateLiteral(n) ? n.text : undefined);

/** `a.b(…).c(…)` → "a". */
function chainRoot(e: Node): string | undefined {
  let n: Node = e;
  for (;;) {
    if (isIdentifier(n)) return n.text;
    if (isCallExpression(n) || isPropertyAccessExpression(n)) n = n.expression;
    else return undefined;
  }
}

/** A node given as a function or call that uses a subgraph (`(s) => sub.invoke(s)`): the variables it uses. */
function variablesIn(node: Node, initializers: Map<string, Expression>): string[] {
  const found = new Set<string>();
  const visit = (n: Node): void => {
    if (isIdentifier(n) && initializers.has(n.text)) found.add(n.text);
    else n.forEachChild(visit);
  };
  visit(node);
  return [...found];
}
