export function App() {
  return <div>svcplane</div>;
}
