// Reference import edges for TestJavaImportsAgainstJavac: every import of the .java files
// below a folder (argument 1), parsed by javac and resolved by javac's symbol table
// (Elements.getTypeElement, which knows nested types and static members' owners) to the file
// of the outermost type it names, when that file is in the folder. Imports of a whole package
// (import a.b.*) name no single file and are left out. Prints "file<TAB>line<TAB>target".
// Run with the JDK whose classes the folder's imports name:
// java --add-exports jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED JavaImports.java <folder>
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ImportTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.Trees;
import com.sun.tools.javac.api.JavacTaskImpl;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.lang.model.element.Element;
import javax.lang.model.element.TypeElement;
import javax.lang.model.util.Elements;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class JavaImports {
    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]).toRealPath();
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            // A module declaration would make the folder a module to compile; the imports resolve
            // against the running JDK's modules instead.
            files = s.filter(p -> p.toString().endsWith(".java") && !p.endsWith("module-info.java") && Files.isRegularFile(p))
                    .sorted().toList();
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null);
        JavacTask task = (JavacTask) javac.getTask(null, fm, d -> {}, List.of("-proc:none"), null,
                fm.getJavaFileObjectsFromPaths(files));
        Elements elements = task.getElements();
        SourcePositions positions = Trees.instance(task).getSourcePositions();
        Map<String, String> fileOf = new HashMap<>(); // outermost type -> file
        List<CompilationUnitTree> units = new java.util.ArrayList<>();
        Iterable<? extends CompilationUnitTree> parsed = task.parse();
        ((JavacTaskImpl) task).enter(); // sets up the modules the symbol table looks types up in
        for (CompilationUnitTree cu : parsed) {
            units.add(cu);
            String pkg = cu.getPackageName() == null ? "" : cu.getPackageName().toString() + ".";
            Path p = Path.of(cu.getSourceFile().toUri());
            String name = p.getFileName().toString().replaceFirst("\\.java$", "");
            fileOf.put(pkg + name, root.relativize(p).toString());
        }
        for (CompilationUnitTree cu : units) {
            String from = root.relativize(Path.of(cu.getSourceFile().toUri())).toString();
            for (ImportTree im : cu.getImports()) {
                String q = im.getQualifiedIdentifier().toString();
                String owner = q.substring(0, Math.max(0, q.lastIndexOf('.')));
                boolean onDemand = q.endsWith(".*");
                // import a.B; -> B. import a.B.*; -> B (its member types), unless a.B is a
                // package. import static a.B.m; and import static a.B.*; -> B.
                String typeName = im.isStatic() || onDemand ? owner : q;
                TypeElement t = type(elements, typeName);
                if (t == null) {
                    continue;
                }
                Element outer = t;
                while (outer.getEnclosingElement() instanceof TypeElement e) {
                    outer = e;
                }
                String target = fileOf.get(((TypeElement) outer).getQualifiedName().toString());
                if (target != null && !target.equals(from)) {
                    long line = cu.getLineMap().getLineNumber(positions.getStartPosition(cu, im));
                    System.out.println(from + "\t" + line + "\t" + target);
                }
            }
        }
    }

    static TypeElement type(Elements elements, String name) {
        for (TypeElement t : elements.getAllTypeElements(name)) {
            return t;
        }
        return null;
    }
}
