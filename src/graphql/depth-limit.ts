import { GraphQLError, Kind, type ASTNode, type FragmentDefinitionNode, type ValidationContext, type ValidationRule } from 'graphql';

/** Refuses operations nested deeper than `max` selections (fragments followed, cycles cut). */
export function depthLimit(max: number): ValidationRule {
  return (context: ValidationContext) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
    const depthOf = (node: ASTNode, depth: number, seen: Set<string>): number => {
      switch (node.kind) {
        case Kind.FIELD: {
          if (node.name.value.startsWith('__')) return depth; // introspection is bounded by its own rules
          if (!node.selectionSet) return depth;
          return Math.max(depth, ...node.selectionSet.selections.map((s) => depthOf(s, depth + 1, seen)));
        }
        case Kind.INLINE_FRAGMENT:
        case Kind.OPERATION_DEFINITION:
          return Math.max(depth, ...node.selectionSet.selections.map((s) => depthOf(s, depth, seen)));
        case Kind.FRAGMENT_SPREAD: {
          const name = node.name.value;
          const fragment = fragments.get(name);
          if (!fragment || seen.has(name)) return depth;
          return depthOf({ ...fragment, kind: Kind.INLINE_FRAGMENT } as ASTNode, depth, new Set(seen).add(name));
        }
        default:
          return depth;
      }
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node, 0, new Set());
        if (depth > max) {
          context.reportError(
            new GraphQLError(`The operation is nested ${depth} levels deep; the limit is ${max}.`, { nodes: [node] }),
          );
        }
      },
    };
  };
}
